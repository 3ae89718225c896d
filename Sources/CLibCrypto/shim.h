#ifndef FELICA_CLIBCRYPTO_SHIM_H
#define FELICA_CLIBCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#endif
