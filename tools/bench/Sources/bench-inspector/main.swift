import Foundation

// `bench-inspector`: the web inspector's response times over a log of a million entries
// (docs/inspector.md). Its own executable, so that `bench` never builds Hummingbird and NIO.
do {
  try InspectorBench.run(Array(CommandLine.arguments.dropFirst()))
} catch {
  FileHandle.standardError.write(Data("bench-inspector: \(error)\n".utf8))
  exit(2)
}
