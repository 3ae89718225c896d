#ifndef FELICA_CLIBCRYPTO_H
#define FELICA_CLIBCRYPTO_H
/// OpenSSL's libcrypto loaded at first use rather than at start: linking it would make every
/// felica start bind its thousands of symbols, while only the FeliCa Lite-S card key (MACs,
/// mutual authentication) needs it. The types come from OpenSSL's own headers; the functions
/// from the library `dlopen`ed by `felica_crypto_load`, which must succeed before any other
/// entry is called.
#include <stddef.h>
#include <openssl/evp.h>
#include <openssl/err.h>

/// The library's file name, as the dynamic loader searches for it.
#define FELICA_LIBCRYPTO "libcrypto.so.3"

/// Loads libcrypto and finds its functions, once per process (later calls return the first
/// answer). 0 when loaded; otherwise -1, with what failed (the library or a function, in the
/// loader's words) in `message`. The environment variable FELICA_TEST_LIBCRYPTO, when set,
/// names another file to load — for tests of a machine without libcrypto.
int felica_crypto_load(char *message, size_t size);

EVP_CIPHER_CTX *felica_EVP_CIPHER_CTX_new(void);
void felica_EVP_CIPHER_CTX_free(EVP_CIPHER_CTX *context);
const EVP_CIPHER *felica_EVP_des_ede_cbc(void);
int felica_EVP_EncryptInit_ex(EVP_CIPHER_CTX *context, const EVP_CIPHER *cipher, ENGINE *engine,
                              const unsigned char *key, const unsigned char *iv);
int felica_EVP_CIPHER_CTX_set_padding(EVP_CIPHER_CTX *context, int padding);
int felica_EVP_EncryptUpdate(EVP_CIPHER_CTX *context, unsigned char *out, int *written,
                             const unsigned char *in, int count);
int felica_EVP_EncryptFinal_ex(EVP_CIPHER_CTX *context, unsigned char *out, int *written);
unsigned long felica_ERR_get_error(void);
void felica_ERR_error_string_n(unsigned long code, char *text, size_t size);
#endif
