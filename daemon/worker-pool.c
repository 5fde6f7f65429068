/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cleanup.h"
#include "worker-pool.h"

#define WORKER_POOL_MAX_THREADS 16

typedef struct WorkItem {
	struct WorkItem *next;
	WorkFn work;
	WorkDoneFn done;
	void *userdata;
} WorkItem;

typedef struct WorkQueue {
	WorkItem *head, *tail;
} WorkQueue;

struct WorkerPool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	WorkQueue todo, finished;
	bool quit;
	int efd;
	sd_event_source *source;
	pthread_t threads[WORKER_POOL_MAX_THREADS];
	unsigned n_threads;
};

static void queue_push(WorkQueue *q, WorkItem *w)
{
	w->next = NULL;
	if (q->tail)
		q->tail->next = w;
	else
		q->head = w;
	q->tail = w;
}

static WorkItem *queue_pop(WorkQueue *q)
{
	WorkItem *w = q->head;

	if (w) {
		q->head = w->next;
		if (!q->head)
			q->tail = NULL;
	}
	return w;
}

static void *worker_main(void *arg)
{
	WorkerPool *p = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		WorkItem *w;

		while (!p->todo.head && !p->quit)
			pthread_cond_wait(&p->wake, &p->lock);
		w = queue_pop(&p->todo);
		if (!w)
			break; /* quit, and nothing left to do */
		pthread_mutex_unlock(&p->lock);
		w->work(w->userdata);
		pthread_mutex_lock(&p->lock);
		queue_push(&p->finished, w);
		if (write(p->efd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow at our rates; nothing else can fail */
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static int on_finished(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	WorkerPool *p = userdata;
	uint64_t n;
	WorkItem *w;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return -errno;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		w = queue_pop(&p->finished);
		pthread_mutex_unlock(&p->lock);
		if (!w)
			break;
		if (w->done)
			w->done(w->userdata);
		free(w);
	}
	return 0;
}

int worker_pool_new(sd_event *event, unsigned n_threads, WorkerPool **ret)
{
	_cleanup_(worker_pool_freep) WorkerPool *p = NULL;
	int r;

	if (n_threads == 0 || n_threads > WORKER_POOL_MAX_THREADS)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->efd = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->efd < 0)
		return negative_errno();
	r = sd_event_add_io(event, &p->source, p->efd, EPOLLIN, on_finished, p);
	if (r < 0)
		return r;
	for (; p->n_threads < n_threads; p->n_threads++) {
		r = pthread_create(&p->threads[p->n_threads], NULL, worker_main, p);
		if (r > 0)
			return -r;
	}
	*ret = TAKE_PTR(p);
	return 0;
}

WorkerPool *worker_pool_free(WorkerPool *p)
{
	WorkItem *w;

	if (!p)
		return NULL;
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	/* deliver what finished so nothing it owns is lost */
	while ((w = queue_pop(&p->finished))) {
		if (w->done)
			w->done(w->userdata);
		free(w);
	}
	sd_event_source_disable_unref(p->source);
	safe_close(p->efd);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return NULL;
}

int worker_pool_submit(WorkerPool *p, WorkFn work, WorkDoneFn done, void *userdata)
{
	WorkItem *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	*w = (WorkItem){ .work = work, .done = done, .userdata = userdata };
	pthread_mutex_lock(&p->lock);
	queue_push(&p->todo, w);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	return 0;
}
