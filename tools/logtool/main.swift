// The `logtool` executable: every generic command of LogToolKit.
import LogToolKit

LogTool.main(LogToolCommand.self)
