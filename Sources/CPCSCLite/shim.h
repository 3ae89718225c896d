#ifndef FELICA_CPCSCLITE_SHIM_H
#define FELICA_CPCSCLITE_SHIM_H
#include <winscard.h>
#include <reader.h>

/// `SCARD_PCI_T0` is a macro over a global; Swift cannot import it directly.
static inline const SCARD_IO_REQUEST *felica_pci_t0(void) { return SCARD_PCI_T0; }
/// `SCARD_PCI_T1` is a macro over a global; Swift cannot import it directly.
static inline const SCARD_IO_REQUEST *felica_pci_t1(void) { return SCARD_PCI_T1; }
/// `MAX_BUFFER_SIZE_EXTENDED` is an expression macro; Swift imports only literals.
static inline unsigned long felica_max_buffer_size_extended(void) { return MAX_BUFFER_SIZE_EXTENDED; }
/// `CM_IOCTL_GET_FEATURE_REQUEST` is an expression macro (PC/SC Part 10 feature list).
static inline unsigned long felica_ioctl_get_feature_request(void) { return CM_IOCTL_GET_FEATURE_REQUEST; }
#endif
