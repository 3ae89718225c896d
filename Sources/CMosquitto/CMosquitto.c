#include "cmosquitto.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/// The library's functions, typed by its own header's declarations.
static struct {
    __typeof__(&mosquitto_lib_init) lib_init;
    __typeof__(&mosquitto_new) new;
    __typeof__(&mosquitto_destroy) destroy;
    __typeof__(&mosquitto_connect_callback_set) connect_callback_set;
    __typeof__(&mosquitto_disconnect_callback_set) disconnect_callback_set;
    __typeof__(&mosquitto_publish_callback_set) publish_callback_set;
    __typeof__(&mosquitto_username_pw_set) username_pw_set;
    __typeof__(&mosquitto_will_set) will_set;
    __typeof__(&mosquitto_reconnect_delay_set) reconnect_delay_set;
    __typeof__(&mosquitto_connect_async) connect_async;
    __typeof__(&mosquitto_loop_start) loop_start;
    __typeof__(&mosquitto_loop_stop) loop_stop;
    __typeof__(&mosquitto_publish) publish;
    __typeof__(&mosquitto_disconnect) disconnect;
    __typeof__(&mosquitto_strerror) strerror;
    __typeof__(&mosquitto_connack_string) connack_string;
} mosquitto;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

static void load(void) {
    const char *name = getenv("FELICA_TEST_LIBMOSQUITTO");
    if (name == NULL || *name == 0) name = FELICA_LIBMOSQUITTO;
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(failure, sizeof failure, "%s", why ? why : name);
        return;
    }
#define FIND(field) \
    if ((*(void **)&mosquitto.field = dlsym(library, "mosquitto_" #field)) == NULL) { \
        snprintf(failure, sizeof failure, "%s has no function mosquitto_%s", name, #field); \
        return; \
    }
    FIND(lib_init)
    FIND(new)
    FIND(destroy)
    FIND(connect_callback_set)
    FIND(disconnect_callback_set)
    FIND(publish_callback_set)
    FIND(username_pw_set)
    FIND(will_set)
    FIND(reconnect_delay_set)
    FIND(connect_async)
    FIND(loop_start)
    FIND(loop_stop)
    FIND(publish)
    FIND(disconnect)
    FIND(strerror)
    FIND(connack_string)
#undef FIND
}

int felica_mosquitto_load(char *message, size_t size) {
    pthread_once(&once, load);
    if (failure[0] == 0) return 0;
    if (size > 0) snprintf(message, size, "%s", failure);
    return -1;
}

int felica_mosquitto_lib_init(void) { return mosquitto.lib_init(); }
struct mosquitto *felica_mosquitto_new(const char *id, bool clean_session, void *obj) { return mosquitto.new(id, clean_session, obj); }
void felica_mosquitto_destroy(struct mosquitto *mosq) { mosquitto.destroy(mosq); }
void felica_mosquitto_connect_callback_set(struct mosquitto *mosq, void (*callback)(struct mosquitto *, void *, int)) { mosquitto.connect_callback_set(mosq, callback); }
void felica_mosquitto_disconnect_callback_set(struct mosquitto *mosq, void (*callback)(struct mosquitto *, void *, int)) { mosquitto.disconnect_callback_set(mosq, callback); }
void felica_mosquitto_publish_callback_set(struct mosquitto *mosq, void (*callback)(struct mosquitto *, void *, int)) { mosquitto.publish_callback_set(mosq, callback); }
int felica_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) { return mosquitto.username_pw_set(mosq, username, password); }
int felica_mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain) { return mosquitto.will_set(mosq, topic, payloadlen, payload, qos, retain); }
int felica_mosquitto_reconnect_delay_set(struct mosquitto *mosq, unsigned int reconnect_delay, unsigned int reconnect_delay_max, bool reconnect_exponential_backoff) { return mosquitto.reconnect_delay_set(mosq, reconnect_delay, reconnect_delay_max, reconnect_exponential_backoff); }
int felica_mosquitto_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive) { return mosquitto.connect_async(mosq, host, port, keepalive); }
int felica_mosquitto_loop_start(struct mosquitto *mosq) { return mosquitto.loop_start(mosq); }
int felica_mosquitto_loop_stop(struct mosquitto *mosq, bool force) { return mosquitto.loop_stop(mosq, force); }
int felica_mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain) { return mosquitto.publish(mosq, mid, topic, payloadlen, payload, qos, retain); }
int felica_mosquitto_disconnect(struct mosquitto *mosq) { return mosquitto.disconnect(mosq); }
const char *felica_mosquitto_strerror(int code) { return mosquitto.strerror(code); }
const char *felica_mosquitto_connack_string(int code) { return mosquitto.connack_string(code); }
