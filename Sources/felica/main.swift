import FeliCaCLI

#if canImport(Glibc)
import Glibc
#endif

exit(await FeliCaCommandLine.felica())
