#ifndef FELICA_CCURL_SHIM_H
#define FELICA_CCURL_SHIM_H
#include <curl/curl.h>

/// `curl_easy_setopt` and `curl_easy_getinfo` are variadic, which Swift cannot call: one
/// typed entry per kind of argument.
static inline CURLcode felica_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode felica_curl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode felica_curl_setopt_list(CURL *curl, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode felica_curl_setopt_write(CURL *curl, curl_write_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, callback);
}
static inline CURLcode felica_curl_response_code(CURL *curl, long *code) {
    return curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, code);
}
#endif
