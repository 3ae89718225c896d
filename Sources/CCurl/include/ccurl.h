#ifndef FELICA_CCURL_H
#define FELICA_CCURL_H
/// libcurl loaded at first use rather than at start: felica's start-up would otherwise pay
/// for libcurl's 30-odd shared libraries on every run, while only `watch --post` needs them.
/// The types and constants come from libcurl's own header; the functions from the library
/// `dlopen`ed by `felica_curl_load`, which must succeed before any other entry is called.
#include <stddef.h>
#include <curl/curl.h>

/// The library's file name, as the dynamic loader searches for it.
#define FELICA_LIBCURL "libcurl.so.4"

/// Loads libcurl and finds its functions, once per process (later calls return the first
/// answer). 0 when loaded; otherwise -1, with what failed (the library or a function, in the
/// loader's words) in `message`. The environment variable FELICA_TEST_LIBCURL, when set,
/// names another file to load — for tests of a machine without libcurl.
int felica_curl_load(char *message, size_t size);

CURLcode felica_curl_global_init(long flags);
CURL *felica_curl_easy_init(void);
void felica_curl_easy_cleanup(CURL *curl);
CURLcode felica_curl_easy_perform(CURL *curl);
const char *felica_curl_easy_strerror(CURLcode code);
struct curl_slist *felica_curl_slist_append(struct curl_slist *list, const char *line);
void felica_curl_slist_free_all(struct curl_slist *list);

/// `curl_easy_setopt` and `curl_easy_getinfo` are variadic, which Swift cannot call: one
/// typed entry per kind of argument.
CURLcode felica_curl_setopt_long(CURL *curl, CURLoption option, long value);
CURLcode felica_curl_setopt_string(CURL *curl, CURLoption option, const char *value);
CURLcode felica_curl_setopt_list(CURL *curl, CURLoption option, struct curl_slist *value);
CURLcode felica_curl_setopt_write(CURL *curl, curl_write_callback callback);
CURLcode felica_curl_response_code(CURL *curl, long *code);
#endif
