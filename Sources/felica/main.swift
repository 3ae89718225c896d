import FeliCaCLI

#if canImport(Glibc)
import Glibc
#endif

// Answered before the first `await`: from there on, the top-level code runs as an async
// main, which starts Swift concurrency's threads, a good part of a `felica --version`.
if let code = FeliCaCommandLine.felicaWithoutWaiting() { exit(code) }
exit(await FeliCaCommandLine.felica())
