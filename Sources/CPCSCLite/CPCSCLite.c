/* pcsc-lite for Swift: everything is in include/shim.h. SwiftPM builds a C target from at
   least one source file; this one compiles the shim, so a build of this target alone shows
   that pcsc-lite's headers are found through the forwarding headers, without pkg-config. */
#include "shim.h"
