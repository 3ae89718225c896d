#include "ccurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

static void load(void) {
    const char *name = getenv("FELICA_TEST_LIBCURL");
    if (name == NULL || *name == 0) name = FELICA_LIBCURL;
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(failure, sizeof failure, "%s", why ? why : name);
        return;
    }
#define FIND(field, symbol) \
    if ((*(void **)&curl.field = dlsym(library, symbol)) == NULL) { \
        snprintf(failure, sizeof failure, "%s has no function %s", name, symbol); \
        return; \
    }
    FIND(global_init, "curl_global_init")
    FIND(easy_init, "curl_easy_init")
    FIND(easy_cleanup, "curl_easy_cleanup")
    FIND(easy_perform, "curl_easy_perform")
    FIND(easy_strerror, "curl_easy_strerror")
    FIND(slist_append, "curl_slist_append")
    FIND(slist_free_all, "curl_slist_free_all")
    FIND(easy_setopt, "curl_easy_setopt")
    FIND(easy_getinfo, "curl_easy_getinfo")
#undef FIND
}

int felica_curl_load(char *message, size_t size) {
    pthread_once(&once, load);
    if (failure[0] == 0) return 0;
    if (size > 0) snprintf(message, size, "%s", failure);
    return -1;
}

CURLcode felica_curl_global_init(long flags) { return curl.global_init(flags); }
CURL *felica_curl_easy_init(void) { return curl.easy_init(); }
void felica_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
CURLcode felica_curl_easy_perform(CURL *handle) { return curl.easy_perform(handle); }
const char *felica_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }
struct curl_slist *felica_curl_slist_append(struct curl_slist *list, const char *line) {
    return curl.slist_append(list, line);
}
void felica_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLcode felica_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode felica_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode felica_curl_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode felica_curl_setopt_write(CURL *handle, curl_write_callback callback) {
    return curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}
CURLcode felica_curl_response_code(CURL *handle, long *code) {
    return curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}
