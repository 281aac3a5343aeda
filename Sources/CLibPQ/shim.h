#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>
#include <poll.h>
/* Waiting for many connections' sockets at once (SocketReadiness). */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
