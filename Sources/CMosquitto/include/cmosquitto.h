#ifndef FELICA_CMOSQUITTO_H
#define FELICA_CMOSQUITTO_H
/// libmosquitto loaded at first use rather than at start, as CCurl does for libcurl: only
/// `watch --mqtt` needs it. Types and constants come from libmosquitto's own header; each
/// `felica_mosquitto_X` calls the library's `mosquitto_X`, found by `felica_mosquitto_load`,
/// which must succeed before any other entry is called.
#include <stdbool.h>
#include <stddef.h>
#include <mosquitto.h>

/// The library's file name, as the dynamic loader searches for it.
#define FELICA_LIBMOSQUITTO "libmosquitto.so.1"

/// Loads libmosquitto and finds its functions, once per process (later calls return the first
/// answer). 0 when loaded; otherwise -1, with what failed in `message`. The environment
/// variable FELICA_TEST_LIBMOSQUITTO, when set, names another file to load — for tests of a
/// machine without libmosquitto.
int felica_mosquitto_load(char *message, size_t size);

int felica_mosquitto_lib_init(void);
struct mosquitto *felica_mosquitto_new(const char *id, bool clean_session, void *obj);
void felica_mosquitto_destroy(struct mosquitto *mosq);
void felica_mosquitto_connect_callback_set(struct mosquitto *mosq, void (*callback)(struct mosquitto *, void *, int));
void felica_mosquitto_disconnect_callback_set(struct mosquitto *mosq, void (*callback)(struct mosquitto *, void *, int));
void felica_mosquitto_publish_callback_set(struct mosquitto *mosq, void (*callback)(struct mosquitto *, void *, int));
int felica_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password);
int felica_mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
int felica_mosquitto_reconnect_delay_set(struct mosquitto *mosq, unsigned int reconnect_delay, unsigned int reconnect_delay_max, bool reconnect_exponential_backoff);
int felica_mosquitto_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive);
int felica_mosquitto_loop_start(struct mosquitto *mosq);
int felica_mosquitto_loop_stop(struct mosquitto *mosq, bool force);
int felica_mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain);
int felica_mosquitto_disconnect(struct mosquitto *mosq);
const char *felica_mosquitto_strerror(int code);
const char *felica_mosquitto_connack_string(int code);
#endif
