#ifndef CLIBCURL_SHIM_H
#define CLIBCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt is variadic, which Swift cannot call: one typed wrapper per kind of value. */
static inline CURLcode ledger_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ledger_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ledger_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ledger_curl_setopt_read_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, function);
}
/* The server's reply lines (SMTP: every response line, CRLF included), for error messages. */
static inline CURLcode ledger_curl_setopt_header_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, function);
}
static inline CURLcode ledger_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
