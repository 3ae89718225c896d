#ifndef FELICA_CPCSCLITE_SHIM_H
#define FELICA_CPCSCLITE_SHIM_H
/* pcsc-lite's headers live in /usr/include/PCSC and include each other by bare name
   (<pcsclite.h>, <wintypes.h>); pcsclite.h and wintypes.h beside this file forward those
   names, so no -I from pkg-config is needed (its -pthread is a flag SwiftPM refuses in a
   package built as a dependency). */
#include <PCSC/winscard.h>
#include <PCSC/reader.h>

/// `SCARD_PCI_T0` is a macro over a global; Swift cannot import it directly.
static inline const SCARD_IO_REQUEST *felica_pci_t0(void) { return SCARD_PCI_T0; }
/// `SCARD_PCI_T1` is a macro over a global; Swift cannot import it directly.
static inline const SCARD_IO_REQUEST *felica_pci_t1(void) { return SCARD_PCI_T1; }
/// `MAX_BUFFER_SIZE_EXTENDED` is an expression macro; Swift imports only literals.
static inline unsigned long felica_max_buffer_size_extended(void) { return MAX_BUFFER_SIZE_EXTENDED; }
/// `CM_IOCTL_GET_FEATURE_REQUEST` is an expression macro (PC/SC Part 10 feature list).
static inline unsigned long felica_ioctl_get_feature_request(void) { return CM_IOCTL_GET_FEATURE_REQUEST; }
#endif
