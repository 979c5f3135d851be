#include "CMicroHTTPD.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* Each connection's send buffer is bounded, so that a page that stops reading fills it within seconds (its
   queue in Bearing then overflows and it is dropped) instead of after the megabytes Linux autotunes to. */
static void bound_send_buffer(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    (void)socket_context;
    if (code != MHD_CONNECTION_NOTIFY_STARTED) return;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    int bytes = *(const int *)cls;
    if (info != NULL && bytes > 0) setsockopt(info->connect_fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
}

static const int send_buffer_bytes = 64 * 1024;

struct MHD_Daemon *bearing_mhd_start(int listen_fd, unsigned int connection_limit, size_t memory_limit,
                                     unsigned int timeout, size_t stack_size,
                                     MHD_AccessHandlerCallback handler, void *handler_cls,
                                     MHD_RequestCompletedCallback completed, void *completed_cls) {
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL,
                            0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout,
                            MHD_OPTION_THREAD_STACK_SIZE, stack_size,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_NOTIFY_CONNECTION, bound_send_buffer, (void *)&send_buffer_bytes,
                            MHD_OPTION_END);
}

static enum MHD_Result count_one(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind; (void)key; (void)value;
    ++*(int *)cls;
    return MHD_YES;
}

int bearing_mhd_header_count(struct MHD_Connection *connection) {
    int n = 0;
    MHD_get_connection_values(connection, MHD_HEADER_KIND, count_one, &n);
    return n;
}

int bearing_mhd_peer(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (size) buffer[0] = 0;
    if (info == NULL || info->client_addr == NULL) return 0;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, buffer, (socklen_t)size);
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, buffer, (socklen_t)size);
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return 1;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return in6->sin6_addr.s6_addr[12] == 127;
        return 0;
    }
    return 0;
}
