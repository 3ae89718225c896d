#ifndef FELICA_CLIBNFC_SHIM_H
#define FELICA_CLIBNFC_SHIM_H
#include <nfc/nfc.h>
#endif
