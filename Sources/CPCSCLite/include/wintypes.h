/* Forwards the bare name pcsc-lite's pcsclite.h includes (see shim.h). */
#ifndef FELICA_CPCSCLITE_FORWARD_WINTYPES_H
#define FELICA_CPCSCLITE_FORWARD_WINTYPES_H
#include <PCSC/wintypes.h>
#endif
