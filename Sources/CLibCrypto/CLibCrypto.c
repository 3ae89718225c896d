#include "clibcrypto.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/// Each pointer typed from OpenSSL's own declaration of the function.
static struct {
    __typeof__(&EVP_CIPHER_CTX_new) cipher_ctx_new;
    __typeof__(&EVP_CIPHER_CTX_free) cipher_ctx_free;
    __typeof__(&EVP_des_ede_cbc) des_ede_cbc;
    __typeof__(&EVP_EncryptInit_ex) encrypt_init_ex;
    __typeof__(&EVP_CIPHER_CTX_set_padding) cipher_ctx_set_padding;
    __typeof__(&EVP_EncryptUpdate) encrypt_update;
    __typeof__(&EVP_EncryptFinal_ex) encrypt_final_ex;
    __typeof__(&ERR_get_error) err_get_error;
    __typeof__(&ERR_error_string_n) err_error_string_n;
} crypto;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

static void load(void) {
    const char *name = getenv("FELICA_TEST_LIBCRYPTO");
    if (name == NULL || *name == 0) name = FELICA_LIBCRYPTO;
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(failure, sizeof failure, "%s", why ? why : name);
        return;
    }
#define FIND(field, symbol) \
    if ((*(void **)&crypto.field = dlsym(library, symbol)) == NULL) { \
        snprintf(failure, sizeof failure, "%s has no function %s", name, symbol); \
        return; \
    }
    FIND(cipher_ctx_new, "EVP_CIPHER_CTX_new")
    FIND(cipher_ctx_free, "EVP_CIPHER_CTX_free")
    FIND(des_ede_cbc, "EVP_des_ede_cbc")
    FIND(encrypt_init_ex, "EVP_EncryptInit_ex")
    FIND(cipher_ctx_set_padding, "EVP_CIPHER_CTX_set_padding")
    FIND(encrypt_update, "EVP_EncryptUpdate")
    FIND(encrypt_final_ex, "EVP_EncryptFinal_ex")
    FIND(err_get_error, "ERR_get_error")
    FIND(err_error_string_n, "ERR_error_string_n")
#undef FIND
}

int felica_crypto_load(char *message, size_t size) {
    pthread_once(&once, load);
    if (failure[0] == 0) return 0;
    if (size > 0) snprintf(message, size, "%s", failure);
    return -1;
}

EVP_CIPHER_CTX *felica_EVP_CIPHER_CTX_new(void) { return crypto.cipher_ctx_new(); }
void felica_EVP_CIPHER_CTX_free(EVP_CIPHER_CTX *context) { crypto.cipher_ctx_free(context); }
const EVP_CIPHER *felica_EVP_des_ede_cbc(void) { return crypto.des_ede_cbc(); }
int felica_EVP_EncryptInit_ex(EVP_CIPHER_CTX *context, const EVP_CIPHER *cipher, ENGINE *engine,
                              const unsigned char *key, const unsigned char *iv) {
    return crypto.encrypt_init_ex(context, cipher, engine, key, iv);
}
int felica_EVP_CIPHER_CTX_set_padding(EVP_CIPHER_CTX *context, int padding) {
    return crypto.cipher_ctx_set_padding(context, padding);
}
int felica_EVP_EncryptUpdate(EVP_CIPHER_CTX *context, unsigned char *out, int *written,
                             const unsigned char *in, int count) {
    return crypto.encrypt_update(context, out, written, in, count);
}
int felica_EVP_EncryptFinal_ex(EVP_CIPHER_CTX *context, unsigned char *out, int *written) {
    return crypto.encrypt_final_ex(context, out, written);
}
unsigned long felica_ERR_get_error(void) { return crypto.err_get_error(); }
void felica_ERR_error_string_n(unsigned long code, char *text, size_t size) {
    crypto.err_error_string_n(code, text, size);
}
