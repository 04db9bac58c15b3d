/// ISO 8601 text of instants in UTC, computed without calendars (so it is fast, and the same on
/// every platform): the log's microsecond timestamps, and the dates of CBOR's JSON rendering.
package enum ISOTime {
  // MARK: - Microsecond timestamps

  /// `2026-01-01T00:00:00.000000Z` (`fractionDigits` 6, 3 or 0) for `micros` since 1970; years
  /// before 0 and after 9999 as `-0005-…` and `10000-…`.
  package static func string(micros: Int64, fractionDigits: Int = 6) -> String {
    let (seconds, fraction) = floorDivide(micros, 1_000_000)
    return text(seconds: seconds, nanoseconds: Int(fraction) * 1000, fractionDigits: fractionDigits)
  }

  /// `2026-01-01`: the UTC day of a timestamp.
  package static func day(micros: Int64) -> String {
    let (days, _) = floorDivide(floorDivide(micros, 1_000_000).0, 86_400)
    var text = ""
    appendDate(days: days, to: &text)
    return text
  }

  // MARK: - Seconds and nanoseconds

  /// 0000-01-01T00:00:00Z in seconds since 1970: the first instant ``string(seconds:nanoseconds:)`` prints.
  package static let minSeconds: Int64 = -62_167_219_200
  /// 10000-01-01T00:00:00Z in seconds since 1970: the first instant past what it prints.
  package static let endSeconds: Int64 = 253_402_300_800

  /// `2026-01-01T00:00:00.5Z`-style text with 3, 6 or 9 fraction digits, the fewest that are exact;
  /// `nil` outside years 0000–9999.
  package static func string(seconds: Int64, nanoseconds: Int) -> String? {
    guard seconds >= minSeconds, seconds < endSeconds, (0..<1_000_000_000).contains(nanoseconds) else { return nil }
    let digits = nanoseconds % 1_000_000 == 0 ? 3 : nanoseconds % 1_000 == 0 ? 6 : 9
    return text(seconds: seconds, nanoseconds: nanoseconds, fractionDigits: digits)
  }

  /// Whole seconds (floored) and nanoseconds (rounded) of a `Double` of seconds since 1970 in
  /// years 0000–9999; `nil` outside them.
  package static func split(_ seconds: Double) -> (seconds: Int64, nanoseconds: Int)? {
    guard seconds.isFinite, seconds >= Double(minSeconds), seconds < Double(endSeconds) else { return nil }
    let floored = seconds.rounded(.down)
    var whole = Int64(floored)
    var nanos = Int(((seconds - floored) * 1e9).rounded())
    if nanos >= 1_000_000_000 {
      whole += 1
      nanos -= 1_000_000_000
    }
    return (whole, nanos)
  }

  // MARK: - Parsing

  /// Parses `YYYY-MM-DD`, optionally followed by `THH:MM[:SS[.fraction]]` and `Z` or `±HH:MM`
  /// (UTC when no zone is given), into microseconds since 1970.
  package static func parse(_ text: String) -> Int64? {
    var scanner = Array(text.utf8)[...]
    func number(_ digits: Int) -> Int64? {
      guard scanner.count >= digits else { return nil }
      var value: Int64 = 0
      for _ in 0..<digits {
        let byte = scanner.removeFirst()
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int64(byte - 0x30)
      }
      return value
    }
    func take(_ character: Character) -> Bool {
      guard let first = scanner.first, first == character.asciiValue else { return false }
      scanner.removeFirst()
      return true
    }
    guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
      (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    var micros = days(fromCivil: year, month, day) * 86_400_000_000
    if take("T") || take("t") || take(" ") {
      guard let hour = number(2), take(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
      micros += (hour * 3600 + minute * 60) * 1_000_000
      if take(":") {
        guard let second = number(2), second < 61 else { return nil }
        micros += second * 1_000_000
        if take(".") || take(",") {
          var scale: Int64 = 100_000
          var digits = 0
          while let byte = scanner.first, (0x30...0x39).contains(byte) {
            scanner.removeFirst()
            micros += Int64(byte - 0x30) * scale
            scale /= 10
            digits += 1
          }
          guard digits > 0 else { return nil }
        }
      }
      if take("Z") || take("z") {
      } else if let sign = scanner.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
        scanner.removeFirst()
        guard let hours = number(2) else { return nil }
        _ = take(":")
        guard let minutes = number(2) else { return nil }
        let offset = (hours * 3600 + minutes * 60) * 1_000_000
        micros += sign == UInt8(ascii: "+") ? -offset : offset
      }
    }
    return scanner.isEmpty ? micros : nil
  }

  // MARK: - Calendar arithmetic

  /// The quotient rounded towards minus infinity and the remainder (`0..<divisor`), for a positive
  /// `divisor`; defined for every `value`, `Int64.min` included.
  package static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
    let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
    return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
  }

  /// Year, month and day of the proleptic Gregorian calendar for a count of days since 1970-01-01.
  package static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date.
  package static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  // MARK: - Text

  /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` with `fractionDigits` 9, 6 or 3 of `nanoseconds`
  /// (truncated), or none for any other count.
  private static func text(seconds: Int64, nanoseconds: Int, fractionDigits: Int) -> String {
    let (days, secondOfDay) = floorDivide(seconds, 86_400)
    var text = ""
    text.reserveCapacity(32)
    appendDate(days: days, to: &text)
    text.append("T")
    appendPadded(secondOfDay / 3600, 2, to: &text)
    text.append(":")
    appendPadded(secondOfDay / 60 % 60, 2, to: &text)
    text.append(":")
    appendPadded(secondOfDay % 60, 2, to: &text)
    switch fractionDigits {
    case 9: appendFraction(Int64(nanoseconds), 9, to: &text)
    case 6: appendFraction(Int64(nanoseconds / 1_000), 6, to: &text)
    case 3: appendFraction(Int64(nanoseconds / 1_000_000), 3, to: &text)
    default: break
    }
    text.append("Z")
    return text
  }

  /// Appends `YYYY-MM-DD` of a count of days since 1970-01-01.
  private static func appendDate(days: Int64, to text: inout String) {
    let (year, month, day) = civil(fromDays: days)
    appendPadded(year, 4, to: &text)
    text.append("-")
    appendPadded(month, 2, to: &text)
    text.append("-")
    appendPadded(day, 2, to: &text)
  }

  private static func appendFraction(_ value: Int64, _ width: Int, to text: inout String) {
    text.append(".")
    appendPadded(value, width, to: &text)
  }

  /// Appends `value` with at least `width` digits, zeros first; a negative value gets its sign
  /// before the zeros (`-0005`).
  private static func appendPadded(_ value: Int64, _ width: Int, to text: inout String) {
    if value < 0 { text.append("-") }
    let digits = String(value.magnitude)
    if digits.count < width { text.append(String(repeating: "0", count: width - digits.count)) }
    text.append(digits)
  }
}
