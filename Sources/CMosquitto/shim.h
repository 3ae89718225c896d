#ifndef FELICA_CMOSQUITTO_SHIM_H
#define FELICA_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
