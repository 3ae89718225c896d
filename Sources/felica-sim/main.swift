import FeliCaSimCommands

#if canImport(Glibc)
import Glibc
#endif

exit(await FeliCaSimCommandLine.felicaSim())
