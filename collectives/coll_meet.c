/* coll_meet.c — the exit meeting of ranks that are no MPI world (no_mpi: they met through
 * NCCL_COMM_ID): a TCP star at rank 0, without CUDA or NCCL, which may be gone at exit.
 *
 * At open (coll_nccl.c, while the program's CUDA context is alive) rank 0 listens on an ephemeral
 * port of the NCCL_COMM_ID host's address, and one ncclBroadcast gives every rank that port and a
 * token (the card; 8 bytes of getrandom, handed out only after the ranks checked each other's job
 * id, coll_nccl.c). At exit (ash_coll_arrive) every other rank connects and says token + rank +
 * the job id's hash.
 * Rank 0, once at its own exit, answers each with "here" and then all of them with its verdict:
 * every rank arrived, or (timeout_s after its own arrival) which ranks did not. A waiting rank
 * that has had no "here" within its own timeout_s names rank 0; one that has waits up to
 * timeout_s + ASH_COLL_MEET_GRACE_S more for the verdict; rank 0 gone (refused, closed) is named
 * at once. When every rank came, the connections stay open for the exchanges after the meeting
 * (ash_coll__meet_allgather: the parameter digest, the job summary): each rank sends its words
 * with the exchange's name hashed, rank 0 gathers them and sends every rank the whole array,
 * under the same bounds; any failure (a rank gone, late, or in another exchange) closes the
 * star, so that the others fail at once instead of waiting. Invariant: every wait is
 * a poll bounded by the deadline (timeout_s <= 0: none, as with MPI; a dead peer's socket still
 * ends a wait at once); sockets are nonblocking, close-on-exec, written with MSG_NOSIGNAL; a
 * stranger or a dead peer on the port costs a closed socket, never a wait nor a rank's place
 * (each accepted socket is heard at once and has ASH_COLL_MEET_HELLO_S to say its hello; at most
 * world + 16 wait, a new one evicts the oldest; a rank evicted before "here" connects again,
 * within its own deadline); a child the rank forked never meets (it would take the rank's place). Threading: the opening thread, then the exit
 * sequence. Callers: coll_nccl.c (listen, join), coll.c (arrive, allgather, close).
 * Must not: use CUDA or NCCL; wait without a deadline (except timeout_s <= 0, as with MPI); block
 * on a socket; let a child the rank forked meet in the rank's place.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ash_coll_int.h"

#define ASH_COLL_MEET_GRACE_S 5.0 /* past rank 0's own deadline, for its verdict to travel */
#define ASH_COLL_MEET_HELLO_S 2.0 /* an accepted socket's time to say its hello (a rank's is sent
                                   * as it connects): a silent one is a stranger */
#define ASH_COLL_MEET_RETRY_S 0.05 /* a peer whose socket rank 0 closed before "here": again */

/* rank 0 -> a peer: one kind byte, then world bytes (1: that rank has arrived) */
enum { ASH_COLL_MEET_HERE = 'H', ASH_COLL_MEET_ALL = 'A', ASH_COLL_MEET_LATE = 'T' };

/* a peer -> rank 0, network byte order */
typedef struct ash_coll_meet_hello {
    uint32_t magic, rank, world, pad;
    uint64_t token;                /* rank 0's, from getrandom: only the job's ranks know it */
    uint64_t job;                  /* the job id's hash: another job's rank is refused */
} ash_coll_meet_hello_t;

/* after the meeting, ahead of a peer's words (rank = the peer) and of rank 0's answer (rank =
 * world, count words of each rank follow); what = a hash of the exchange's name; network byte
 * order */
#define ASH_COLL_MEET_WORDS_MAGIC 0x41535731u /* "ASW1" */
typedef struct ash_coll_meet_words {
    uint32_t magic, what, seq, count, rank, pad;
} ash_coll_meet_words_t;

struct ash_coll_meet {
    int listen_fd;                 /* rank 0 until the meeting: the listening socket */
    struct sockaddr_storage addr;  /* the others: rank 0's address and port */
    socklen_t addrlen;
    uint64_t token;
    pid_t pid;                     /* the rank's process: a forked child at exit takes no part */
    int met;                       /* every rank came: the sockets below carry the exchanges */
    int *conn;                     /* met, rank 0: each peer's socket (conn[0] unused) */
    int fd;                        /* met, a peer: its socket to rank 0 */
    double timeout_s;              /* the meeting's bound, also each exchange's */
    uint32_t seq;                  /* exchanges so far (every rank makes the same ones) */
};

static double ash_coll__meet_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* poll's timeout for a deadline (<= 0: none) */
static int ash_coll__meet_ms(double deadline)
{
    if (deadline <= 0)
        return -1;
    double left = deadline - ash_coll__meet_now();
    return left <= 0 ? 0 : left > 1e6 ? 1000 * 1000 * 1000 : (int)(left * 1000.0) + 1;
}

static uint64_t ash_coll__meet_u64_hton(uint64_t v)
{
    return ((uint64_t)htonl((uint32_t)v) << 32) | htonl((uint32_t)(v >> 32));
}

/* NCCL_COMM_ID's host ("IPv4:port", "[IPv6]:port", "name:port") resolved: getaddrinfo's list */
static struct addrinfo *ash_coll__meet_resolve(const ash_coll_t *c, const char *comm_id)
{
    char host[256];
    const char *h = comm_id, *end;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc;

    if (!comm_id)
        return NULL;
    if (*h == '[') {
        h++;
        end = strchr(h, ']');
    } else {
        end = strrchr(h, ':');
    }
    if (!end || end == h || (size_t)(end - h) >= sizeof host) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: exit meeting: NCCL_COMM_ID \"%.200s\" "
                      "has no host part", comm_id);
        return NULL;
    }
    memcpy(host, h, (size_t)(end - h));
    host[end - h] = 0;
    if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: exit meeting: cannot resolve \"%s\": %s",
                      host, gai_strerror(rc));
        return NULL;
    }
    return res;
}

static void ash_coll__meet_set_port(struct sockaddr_storage *sa, uint16_t port)
{
    if (sa->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)sa)->sin_port = htons(port);
}

void ash_coll__meet_listen(ash_coll_t *c, const char *comm_id, ash_coll_meet_card_t *card)
{
    struct addrinfo *res = ash_coll__meet_resolve(c, comm_id), *ai;
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    int fd = -1, index = 0, backlog = SOMAXCONN; /* strangers queue too: room for the ranks */
    ash_coll_meet_t *m;

    memset(card, 0, sizeof *card);
    for (ai = res; ai; ai = ai->ai_next, index++) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
        ash_coll__meet_set_port(&sa, 0); /* ephemeral: nothing to collide with */
        if (bind(fd, (struct sockaddr *)&sa, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0)
            break;
        close(fd);
        fd = -1;
    }
    if (fd >= 0)
        len = sizeof sa;
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) != 0 || !(m = calloc(1, sizeof *m))) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: no meeting at exit for the ranks: cannot "
                      "listen at the host of NCCL_COMM_ID \"%.200s\" (%s); a rank that stalls at "
                      "the end goes unnoticed, and neither the parameter digest nor the job "
                      "summary is exchanged", comm_id ? comm_id : "", strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return;
    }
    if (getrandom(&m->token, sizeof m->token, 0) != (ssize_t)sizeof m->token) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: no meeting at exit for the ranks: no "
                      "random token (getrandom: %s); a rank that stalls at the end goes unnoticed, "
                      "and neither the parameter digest nor the job summary is exchanged",
                      strerror(errno));
        free(m);
        close(fd);
        freeaddrinfo(res);
        return;
    }
    m->listen_fd = fd;
    m->fd = -1;
    m->pid = getpid();
    c->meet = m;
    card->magic = ASH_COLL_MEET_MAGIC;
    card->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                                : ((struct sockaddr_in *)&sa)->sin_port);
    card->index = (uint32_t)index;
    card->token = m->token;
    ash_coll__log(c, ASH_COLL_LOG_DEBUG, "collectives: the ranks meet at exit on port %u of %.200s",
                  (unsigned)card->port, comm_id);
    freeaddrinfo(res);
}

void ash_coll__meet_join(ash_coll_t *c, const char *comm_id, const ash_coll_meet_card_t *card)
{
    if (card->magic != ASH_COLL_MEET_MAGIC || card->port == 0) {
        ash_coll__meet_close(c); /* rank 0's card did not travel: nobody meets */
        if (c->rank != 0)
            ash_coll__log(c, ASH_COLL_LOG_DEBUG, "collectives: no meeting at exit (rank 0 has no port)");
        return;
    }
    if (c->rank == 0)
        return; /* it listens already */
    struct addrinfo *res = ash_coll__meet_resolve(c, comm_id), *ai = res;
    for (uint32_t i = 0; ai && i < card->index; i++)
        ai = ai->ai_next;
    ash_coll_meet_t *m = ai ? calloc(1, sizeof *m) : NULL;
    if (!m) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: no meeting at exit for rank %d: rank 0's "
                      "address (%.200s) not found here", c->rank, comm_id);
        freeaddrinfo(res);
        return;
    }
    m->listen_fd = -1;
    m->fd = -1;
    m->pid = getpid();
    memcpy(&m->addr, ai->ai_addr, ai->ai_addrlen);
    m->addrlen = ai->ai_addrlen;
    ash_coll__meet_set_port(&m->addr, (uint16_t)card->port);
    m->token = card->token;
    c->meet = m;
    freeaddrinfo(res);
}

void ash_coll__meet_close(ash_coll_t *c)
{
    ash_coll_meet_t *m = c->meet;
    if (!m)
        return;
    if (m->listen_fd >= 0)
        close(m->listen_fd);
    for (int r = 1; m->conn && r < c->world; r++)
        if (m->conn[r] >= 0)
            close(m->conn[r]);
    free(m->conn);
    if (m->fd >= 0)
        close(m->fd);
    free(m);
    c->meet = NULL;
}

/* rank 0's message to one peer; a peer that cannot take 1 + world bytes at once is gone to us */
static void ash_coll__meet_tell(int fd, char kind, const unsigned char *arrived, int world,
                                unsigned char *msg)
{
    msg[0] = (unsigned char)kind;
    memcpy(msg + 1, arrived, (size_t)world);
    (void)send(fd, msg, (size_t)world + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Rank 0's state while it gathers the others: the ranks' sockets, and the accepted sockets whose
 * hello is not complete yet (a bounded set: a new one evicts the oldest, and each has
 * ASH_COLL_MEET_HELLO_S to say its hello), so that silent or lying strangers cost a closed
 * socket and never a rank's place. */
typedef struct ash_coll_meet_gathering {
    int n, left, slots, strangers;
    int *conn;                     /* each rank's socket once its hello was right (conn[0] unused) */
    int *pending;                  /* accepted, hello not complete (-1: a free slot) */
    double *since;                 /* when each pending socket was accepted */
    size_t *got;                   /* bytes of its hello so far */
    ash_coll_meet_hello_t *hello;
    unsigned char *arrived, *msg;
} ash_coll_meet_gathering_t;

static void ash_coll__meet_drop(ash_coll_meet_gathering_t *g, int i)
{
    close(g->pending[i]);
    g->pending[i] = -1;
    g->got[i] = 0;
    g->strangers++;
}

/* Read what pending socket I has of its hello (never waits); a complete one is judged: the
 * job's token and job id, a rank not yet here, this world. */
static void ash_coll__meet_hear(const ash_coll_t *c, ash_coll_meet_gathering_t *g, int i)
{
    const ash_coll_meet_t *m = c->meet;
    ash_coll_meet_hello_t *h = &g->hello[i];
    ssize_t r = recv(g->pending[i], (char *)h + g->got[i], sizeof *h - g->got[i], MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (r > 0 && (g->got[i] += (size_t)r) < sizeof *h)
        return;
    int peer = r > 0 ? (int)ntohl(h->rank) : -1;
    if (r <= 0 || ntohl(h->magic) != ASH_COLL_MEET_MAGIC || ash_coll__meet_u64_hton(h->token) != m->token ||
        ash_coll__meet_u64_hton(h->job) != c->job_hash || (int)ntohl(h->world) != g->n || peer < 1 ||
        peer >= g->n || g->arrived[peer]) {
        ash_coll__meet_drop(g, i); /* silent and gone, or a stranger's hello */
        return;
    }
    int one = 1;
    setsockopt(g->pending[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    g->conn[peer] = g->pending[i];
    g->arrived[peer] = 1;
    g->left--;
    ash_coll__meet_tell(g->conn[peer], ASH_COLL_MEET_HERE, g->arrived, g->n, g->msg);
    g->pending[i] = -1;
    g->got[i] = 0;
}

/* Accept every waiting connection; each is heard at once (a rank's hello is there already);
 * one still silent takes a free slot, else the oldest pending socket's. */
static void ash_coll__meet_accept(const ash_coll_t *c, ash_coll_meet_gathering_t *g)
{
    for (int taken = 0; taken < 256; taken++) { /* a flood cannot keep rank 0 from its deadline */
        int fd = accept4(c->meet->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        int i = 0, oldest = 0;
        while (i < g->slots && g->pending[i] >= 0) {
            if (g->since[i] < g->since[oldest])
                oldest = i;
            i++;
        }
        if (i == g->slots)
            ash_coll__meet_drop(g, i = oldest);
        g->pending[i] = fd;
        g->since[i] = ash_coll__meet_now();
        g->got[i] = 0;
        ash_coll__meet_hear(c, g, i);
    }
}

/* Rank 0: take the others' hellos until all arrived or the deadline; tell them the verdict. */
static ash_coll_status_t ash_coll__meet_gather(ash_coll_t *c, double timeout_s, unsigned char *absent)
{
    ash_coll_meet_t *m = c->meet;
    ash_coll_meet_gathering_t g = {.n = c->world, .left = c->world - 1, .slots = c->world + 16};
    int n = g.n;
    struct pollfd *pf = calloc((size_t)g.slots + 1, sizeof *pf);
    double deadline = timeout_s > 0 ? ash_coll__meet_now() + timeout_s : 0;
    ash_coll_status_t st = ASH_COLL_OK;

    g.conn = malloc(sizeof *g.conn * (size_t)n);
    g.pending = malloc(sizeof *g.pending * (size_t)g.slots);
    g.since = calloc((size_t)g.slots, sizeof *g.since);
    g.got = calloc((size_t)g.slots, sizeof *g.got);
    g.hello = calloc((size_t)g.slots, sizeof *g.hello);
    g.arrived = calloc((size_t)n, 1);
    g.msg = malloc((size_t)n + 1);
    if (!g.conn || !g.pending || !g.since || !g.got || !g.hello || !pf || !g.arrived || !g.msg) {
        st = ASH_COLL_ENOMEM;
        goto out;
    }
    for (int r = 0; r < n; r++)
        g.conn[r] = -1;
    for (int i = 0; i < g.slots; i++)
        g.pending[i] = -1;
    g.arrived[0] = 1;
    while (g.left > 0) {
        int k = 0;
        double now = ash_coll__meet_now(), next = deadline;
        pf[k++] = (struct pollfd){m->listen_fd, POLLIN, 0};
        for (int i = 0; i < g.slots; i++) {
            if (g.pending[i] < 0)
                continue;
            if (now - g.since[i] >= ASH_COLL_MEET_HELLO_S) { /* silent too long: a stranger */
                ash_coll__meet_drop(&g, i);
                continue;
            }
            if (next <= 0 || g.since[i] + ASH_COLL_MEET_HELLO_S < next)
                next = g.since[i] + ASH_COLL_MEET_HELLO_S;
            pf[k++] = (struct pollfd){g.pending[i], POLLIN, 0};
        }
        if (deadline > 0 && now >= deadline)
            break;
        if (poll(pf, (nfds_t)k, ash_coll__meet_ms(next)) < 0 && errno != EINTR) {
            ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: exit meeting: poll: %s", strerror(errno));
            break;
        }
        /* hellos first (their slots are free again after), then new connections */
        for (int i = 0; i < g.slots; i++)
            if (g.pending[i] >= 0)
                ash_coll__meet_hear(c, &g, i);
        ash_coll__meet_accept(c, &g);
    }
    if (g.strangers)
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: exit meeting: closed %d strangers' "
                      "connection(s) on the meeting's port (silent for %.0f s, gone, or not "
                      "knowing this job's token)", g.strangers, ASH_COLL_MEET_HELLO_S);
    for (int r = 1; r < n; r++)
        if (g.conn[r] >= 0)
            ash_coll__meet_tell(g.conn[r], g.left ? ASH_COLL_MEET_LATE : ASH_COLL_MEET_ALL, g.arrived, n, g.msg);
    for (int r = 0; r < n; r++)
        absent[r] = !g.arrived[r];
    st = g.left ? ASH_COLL_ETIMEDOUT : ASH_COLL_OK;
    if (!g.left) { /* every rank came: the star carries the exchanges after the meeting */
        m->conn = g.conn;
        g.conn = NULL;
    }
out:
    for (int r = 0; g.conn && r < n; r++)
        if (g.conn[r] >= 0)
            close(g.conn[r]);
    for (int i = 0; g.pending && i < g.slots; i++)
        if (g.pending[i] >= 0)
            close(g.pending[i]);
    free(g.conn);
    free(g.pending);
    free(g.since);
    free(g.got);
    free(g.hello);
    free(pf);
    free(g.arrived);
    free(g.msg);
    return st;
}

/* A peer: connect to rank 0, say hello, wait for the verdict (see the file's head for bounds). */
static ash_coll_status_t ash_coll__meet_report(ash_coll_t *c, double timeout_s, unsigned char *absent)
{
    ash_coll_meet_t *m = c->meet;
    int n = c->world, here = 0, fd, one = 1;
    double deadline = timeout_s > 0 ? ash_coll__meet_now() + timeout_s : 0;
    unsigned char *msg = malloc((size_t)n + 1), *last = calloc((size_t)n, 1);
    size_t got = 0;
    const char *why = NULL;
    ash_coll_status_t st = ASH_COLL_ETIMEDOUT;
    ash_coll_meet_hello_t hello = {
        .magic = htonl(ASH_COLL_MEET_MAGIC), .rank = htonl((uint32_t)c->rank),
        .world = htonl((uint32_t)n), .token = ash_coll__meet_u64_hton(m->token),
        .job = ash_coll__meet_u64_hton(c->job_hash),
    };

    if (!msg || !last) {
        free(msg);
        free(last);
        return ASH_COLL_ENOMEM;
    }
again: /* rank 0 closed this socket before "here" (a flood evicted it): a new one, same deadline */
    fd = socket(m->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        st = ASH_COLL_ESTATE;
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: exit meeting: socket: %s", strerror(errno));
        goto out;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&m->addr, m->addrlen) != 0 && errno != EINPROGRESS) {
        why = strerror(errno);
        goto gone;
    }
    /* connected (or connecting): the hello goes out once the socket is writable */
    for (size_t sent = 0; sent < sizeof hello;) {
        struct pollfd pf = {fd, POLLOUT, 0};
        int ms = ash_coll__meet_ms(deadline), err = 0;
        socklen_t len = sizeof err;
        if (ms == 0)
            goto late;
        if (poll(&pf, 1, ms) <= 0)
            continue;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0) {
            why = strerror(err);
            if (err != ECONNREFUSED)
                goto retry;
            goto gone;
        }
        ssize_t k = send(fd, (char *)&hello + sent, sizeof hello - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            why = strerror(errno);
            goto retry;
        }
        sent += k > 0 ? (size_t)k : 0;
    }
    /* rank 0's messages: "here" (then its verdict comes within timeout_s of it), then the verdict */
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        int ms = ash_coll__meet_ms(deadline);
        if (ms == 0)
            goto late;
        if (poll(&pf, 1, ms) <= 0)
            continue;
        ssize_t k = recv(fd, msg + got, (size_t)n + 1 - got, MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (k <= 0) {
            why = k == 0 ? "it closed the connection before its verdict" : strerror(errno);
            if (here)
                goto gone;
            goto retry;
        }
        if ((got += (size_t)k) < (size_t)n + 1)
            continue;
        got = 0;
        memcpy(last, msg + 1, (size_t)n);
        if (msg[0] == ASH_COLL_MEET_ALL) {
            st = ASH_COLL_OK;
            m->fd = fd; /* kept for the exchanges after the meeting */
            fd = -1;
            goto out;
        }
        if (msg[0] == ASH_COLL_MEET_LATE) {
            for (int r = 0; r < n; r++)
                absent[r] = !last[r];
            goto out;
        }
        if (msg[0] == ASH_COLL_MEET_HERE && !here) {
            here = 1;
            if (deadline > 0)
                deadline = ash_coll__meet_now() + timeout_s + ASH_COLL_MEET_GRACE_S;
        }
    }
late:
    if (!here) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: exit meeting: rank 0, which gathers the "
                      "ranks at exit, did not come within %.0f s (which other ranks came only it "
                      "knows)", timeout_s);
        absent[0] = 1;
    } else {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: exit meeting: rank 0 came but gave no "
                      "verdict in time; naming the ranks it had not seen");
        for (int r = 0; r < n; r++)
            absent[r] = !last[r];
    }
    goto out;
retry: /* closed or reset before "here": rank 0 may have dropped it among strangers; a rank 0
        * that is gone refuses the next connect at once */
    close(fd);
    fd = -1;
    got = 0;
    if (deadline > 0 && ash_coll__meet_now() + ASH_COLL_MEET_RETRY_S >= deadline)
        goto late;
    poll(NULL, 0, (int)(ASH_COLL_MEET_RETRY_S * 1000));
    goto again;
gone:
    ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: exit meeting: rank 0, which gathers the ranks "
                  "at exit, cannot be reached (%s): it has ended", why);
    absent[0] = 1;
out:
    if (fd >= 0)
        close(fd);
    free(msg);
    free(last);
    return st;
}

ash_coll_status_t ash_coll__meet_arrive(ash_coll_t *c, double timeout_s, unsigned char *absent)
{
    ash_coll_meet_t *m = c->meet;
    if (!m || m->pid != getpid() || m->met)
        return ASH_COLL_OK; /* no meeting was set up (warned at open), a forked child exits, or
                             * the ranks have met already (one meeting per communicator) */
    m->timeout_s = timeout_s;
    ash_coll_status_t st = m->listen_fd >= 0 ? ash_coll__meet_gather(c, timeout_s, absent)
                                             : ash_coll__meet_report(c, timeout_s, absent);
    if (m->listen_fd >= 0) {
        close(m->listen_fd); /* nobody else is let in */
        m->listen_fd = -1;
    }
    if (st == ASH_COLL_OK && (m->conn || m->fd >= 0))
        m->met = 1;
    else
        ash_coll__meet_close(c);
    if (st == ASH_COLL_ETIMEDOUT)
        c->broken = 1;
    return st;
}

/* LEN bytes to or from FD (out: send), each wait a poll bounded by DEADLINE; *why on failure */
static ash_coll_status_t ash_coll__meet_io(int fd, void *buf, size_t len, int out, double deadline,
                                           const char **why)
{
    for (size_t done = 0; done < len;) {
        struct pollfd pf = {fd, out ? POLLOUT : POLLIN, 0};
        int ms = ash_coll__meet_ms(deadline);
        if (ms == 0) {
            *why = out ? "it took no words in time" : "no words from it in time";
            return ASH_COLL_ETIMEDOUT;
        }
        if (poll(&pf, 1, ms) <= 0)
            continue; /* EINTR, or the deadline: checked above */
        ssize_t k = out ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(fd, (char *)buf + done, len - done, MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (k <= 0) {
            *why = k == 0 || errno == ECONNRESET || errno == EPIPE ? "it closed the connection"
                                                                   : strerror(errno);
            return ASH_COLL_EPEER;
        }
        done += (size_t)k;
    }
    return ASH_COLL_OK;
}

static void ash_coll__meet_words_hton(uint64_t *dst, const unsigned long long *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ash_coll__meet_u64_hton(src[i]);
}

static void ash_coll__meet_words_ntoh(unsigned long long *dst, const uint64_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ash_coll__meet_u64_hton(src[i]); /* the swap is its own inverse */
}

/* FNV-1a of an exchange's name: the ranks check that they are in the same exchange */
static uint32_t ash_coll__meet_what(const char *what)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)what; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

static ash_coll_meet_words_t ash_coll__meet_header(uint32_t what, uint32_t seq, size_t count, int rank)
{
    return (ash_coll_meet_words_t){htonl(ASH_COLL_MEET_WORDS_MAGIC), htonl(what), htonl(seq),
                                   htonl((uint32_t)count), htonl((uint32_t)rank), 0};
}

/* NULL when H is the header expected, else what is wrong with it */
static const char *ash_coll__meet_header_bad(const ash_coll_meet_words_t *h,
                                             const ash_coll_meet_words_t *want)
{
    if (h->magic != want->magic || h->count != want->count || h->rank != want->rank)
        return "it sent something other than words for an exchange";
    if (h->what != want->what)
        return "it is in another exchange (do the ranks run with one policy?)";
    if (h->seq != want->seq)
        return "it is at another exchange of the sequence";
    return NULL;
}

ash_coll_status_t ash_coll__meet_allgather(ash_coll_t *c, const char *what,
                                           const unsigned long long *words, size_t count,
                                           unsigned long long *all)
{
    ash_coll_meet_t *m = c->meet;
    int n = c->world, who = 0;
    if (!m || !m->met || m->pid != getpid()) {
        ash_coll__log(c, ASH_COLL_LOG_DEBUG, "collectives: no exchange after the exit meeting: "
                      "the ranks did not meet over TCP");
        return ASH_COLL_ESTATE;
    }
    if (count == 0 || count > 4096)
        return ASH_COLL_EINVAL;
    uint32_t seq = ++m->seq, hash = ash_coll__meet_what(what);
    ash_coll_meet_words_t want;
    double now = ash_coll__meet_now(), t = m->timeout_s;
    /* rank 0 waits timeout_s for the slowest peer; a peer, as long again as rank 0 may wait */
    double deadline = t > 0 ? now + t + (c->rank ? ASH_COLL_MEET_GRACE_S : 0) : 0;
    size_t head = sizeof(ash_coll_meet_words_t), whole = (size_t)n * count * sizeof(uint64_t);
    unsigned char *buf = malloc(head + whole);
    ash_coll_meet_words_t *h = (ash_coll_meet_words_t *)buf;
    uint64_t *wire = (uint64_t *)(buf + head);
    const char *why = "";
    ash_coll_status_t st = ASH_COLL_OK;

    if (!buf)
        return ASH_COLL_ENOMEM;
    if (c->rank != 0) {
        *h = ash_coll__meet_header(hash, seq, count, c->rank);
        ash_coll__meet_words_hton(wire, words, count);
        st = ash_coll__meet_io(m->fd, buf, head + count * sizeof(uint64_t), 1, deadline, &why);
        if (st == ASH_COLL_OK)
            st = ash_coll__meet_io(m->fd, buf, head, 0, deadline, &why);
        want = ash_coll__meet_header(hash, seq, count, n);
        if (st == ASH_COLL_OK && (why = ash_coll__meet_header_bad(h, &want)) != NULL)
            st = ASH_COLL_EPEER;
        if (st == ASH_COLL_OK)
            st = ash_coll__meet_io(m->fd, wire, whole, 0, deadline, &why);
        if (st == ASH_COLL_OK)
            ash_coll__meet_words_ntoh(all, wire, (size_t)n * count);
    } else {
        memcpy(all, words, count * sizeof *all);
        for (who = 1; who < n && st == ASH_COLL_OK; who++) {
            uint64_t *slot = wire + (size_t)who * count;
            st = ash_coll__meet_io(m->conn[who], h, head, 0, deadline, &why);
            want = ash_coll__meet_header(hash, seq, count, who);
            if (st == ASH_COLL_OK && (why = ash_coll__meet_header_bad(h, &want)) != NULL)
                st = ASH_COLL_EPEER;
            if (st == ASH_COLL_OK)
                st = ash_coll__meet_io(m->conn[who], slot, count * sizeof(uint64_t), 0, deadline, &why);
            if (st == ASH_COLL_OK)
                ash_coll__meet_words_ntoh(all + (size_t)who * count, slot, count);
        }
        who--;
        if (st == ASH_COLL_OK) {
            *h = ash_coll__meet_header(hash, seq, count, n);
            ash_coll__meet_words_hton(wire, all, (size_t)n * count);
            /* every peer is reading: the answers go out at once (their own bound, not what the
             * slowest peer's words left of timeout_s) */
            double out = t > 0 ? ash_coll__meet_now() + ASH_COLL_MEET_GRACE_S : 0;
            for (who = 1; who < n && st == ASH_COLL_OK; who++)
                st = ash_coll__meet_io(m->conn[who], buf, head + whole, 1, out, &why);
            who--;
        }
    }
    free(buf);
    if (st != ASH_COLL_OK) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: exit meeting: exchanging %s failed at "
                      "rank %d: %s%s", what, c->rank ? 0 : who, why,
                      c->rank && st == ASH_COLL_EPEER ? " (it has ended, or another rank failed "
                                                        "the exchange)" : "");
        ash_coll__meet_close(c); /* the others see the star close: none waits for this rank */
    }
    return st;
}
