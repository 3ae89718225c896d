/* Forwards the bare name pcsc-lite's winscard.h includes (see shim.h). */
#ifndef FELICA_CPCSCLITE_FORWARD_PCSCLITE_H
#define FELICA_CPCSCLITE_FORWARD_PCSCLITE_H
#include <PCSC/pcsclite.h>
#endif
