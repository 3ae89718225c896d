import FeliCaCLI

#if canImport(Glibc)
import Glibc
#endif

if let code = FeliCaCommandLine.felicaWithoutWaiting() { exit(code) }
exit(await FeliCaCommandLine.felica())
