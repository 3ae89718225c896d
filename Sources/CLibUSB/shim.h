#ifndef FELICA_CLIBUSB_SHIM_H
#define FELICA_CLIBUSB_SHIM_H
#include <libusb.h>
#endif
