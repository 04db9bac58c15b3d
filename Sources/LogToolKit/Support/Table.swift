#if LogTool
/// Column layout of an aligned text table: two spaces between columns, numbers right-aligned,
/// the last column unpadded.
struct TableLayout {
  enum Alignment {
    case left, right
  }

  var titles: [String]
  var alignments: [Alignment]
  var widths: [Int]

  init(_ columns: [(String, Alignment)]) {
    titles = columns.map(\.0)
    alignments = columns.map(\.1)
    widths = titles.map(\.count)
  }

  /// Widens the columns to fit `cells`.
  mutating func fit(_ cells: [String]) {
    for (index, cell) in cells.enumerated() where index < widths.count {
      widths[index] = max(widths[index], cell.count)
    }
  }

  /// Widens column `index` to `width`.
  mutating func fit(column index: Int, width: Int) {
    widths[index] = max(widths[index], width)
  }

  /// The title line.
  var header: String { line(titles) }

  /// One aligned line.
  func line(_ cells: [String]) -> String {
    var text = ""
    for (index, cell) in cells.enumerated() {
      let isLast = index == cells.count - 1
      let padding = String(repeating: " ", count: max(0, widths[index] - cell.count))
      if index > 0 { text += "  " }
      switch alignments[index] {
      case .right: text += padding + cell
      case .left: text += isLast ? cell : cell + padding
      }
    }
    while text.last == " " { text.removeLast() }
    return text
  }
}

/// A table whose rows are all known before printing.
struct Table {
  var layout: TableLayout
  var rows: [[String]] = []

  init(_ columns: [(String, TableLayout.Alignment)]) { layout = TableLayout(columns) }

  mutating func append(_ cells: [String]) {
    layout.fit(cells)
    rows.append(cells)
  }

  /// The header and the rows.
  var lines: [String] { [layout.header] + rows.map(layout.line) }
}

/// Two-column "name  value" lines with the names aligned.
struct FieldList {
  private var fields: [(String, String)] = []

  mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

  var lines: [String] {
    let width = fields.map(\.0.count).max() ?? 0
    return fields.map { name, value in
      value.isEmpty ? name : name + String(repeating: " ", count: width - name.count + 2) + value
    }
  }
}
#endif  // LogTool
