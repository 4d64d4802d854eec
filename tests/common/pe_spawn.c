/* pe_spawn.h: fork one process per PE, pass PE 0's unique id through a pipe, wait, end the rest
 * when one fails. */
#include "pe_spawn.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PE_SPAWN_MAX 64

int pe_spawn_gpus(int max) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    _exit(gcl_device_count(&n) == GCL_OK ? (n > max ? max : n) : 0);
  }
  int st = 0;
  return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

const char *pe_spawn_describe(int pes, int gpus, char *buf, size_t cap) {
  if (pes <= gpus)
    snprintf(buf, cap, "%d PE%s on %d GPU%s", pes, pes == 1 ? "" : "s", pes, pes == 1 ? "" : "s");
  else if (gpus == 1)
    snprintf(buf, cap, "%d PEs on 1 GPU (%d processes share GPU 0, time-sliced)", pes, pes);
  else
    snprintf(buf, cap, "%d PEs on %d GPUs (up to %d processes share a GPU, time-sliced)", pes, gpus,
             (pes + gpus - 1) / gpus);
  return buf;
}

/* The id (made by rank 0, which writes pes - 1 copies: atomic pipe writes), then fn. */
static int id_then_run(int rank, int pes, int gpus, int fd, pe_spawn_main fn, void *user) {
  gcl_pe_unique_id id;
  memset(&id, 0, sizeof id);
  if (rank == 0 && pes > 1) {
    if (gcl_pe_unique_id_create(&id) != GCL_OK) {
      fprintf(stderr, "PE 0: gcl_pe_unique_id_create: %s\n", gcl_last_error());
      return 1;
    }
    for (int i = 1; i < pes; i++)
      if (write(fd, id.bytes, sizeof id.bytes) != (ssize_t)sizeof id.bytes) return 1;
  } else if (rank != 0 && read(fd, id.bytes, sizeof id.bytes) != (ssize_t)sizeof id.bytes) {
    fprintf(stderr, "PE %d: no unique id from PE 0 (it ended first)\n", rank);
    return 1;
  }
  close(fd);
  return fn(rank, pes, rank % gpus, pes > 1 ? &id : NULL, user);
}

/* In PE rank's process: its GPU's context first (the driver up and the primary context retained,
 * as every measured run had it before NVSHMEM was asked for an id), then the id and fn. */
static int pe_child(int rank, int pes, int gpus, int fd, pe_spawn_main fn, void *user) {
  gcl_context *held = NULL; /* fn makes its own; this one only keeps the primary context */
  if (gcl_context_create(rank % gpus, &held) != GCL_OK) {
    fprintf(stderr, "PE %d: gcl_context_create(%d): %s\n", rank, rank % gpus, gcl_last_error());
    return 1;
  }
  int rc = id_then_run(rank, pes, gpus, fd, fn, user);
  gcl_context_destroy(held);
  return rc;
}

static void end_all(pid_t *kids, int pes, int sig) {
  for (int r = 0; r < pes; r++)
    if (kids[r] > 0) kill(kids[r], sig);
}

/* Waits for every PE; a failure (or the deadline) ends the others. */
static int pe_wait(pid_t *kids, int pes, unsigned timeout_s) {
  time_t deadline = timeout_s ? time(NULL) + (time_t)timeout_s : 0;
  int failed = 0, left = pes;
  while (left > 0) {
    int st = 0;
    pid_t pid = waitpid(-1, &st, deadline ? WNOHANG : 0);
    if (pid < 0 && errno != EINTR) break;
    if (pid <= 0) {
      if (deadline && time(NULL) > deadline) {
        for (int r = 0; r < pes; r++)
          if (kids[r] > 0) fprintf(stderr, "PE %d: still running after %u s: killed\n", r, timeout_s);
        end_all(kids, pes, SIGKILL), failed = 1, deadline = 0;
      } else if (deadline) {
        usleep(20000);
      }
      continue;
    }
    for (int r = 0; r < pes; r++) {
      if (kids[r] != pid) continue;
      kids[r] = 0, left--;
      if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
      if (WIFSIGNALED(st)) fprintf(stderr, "PE %d: ended by signal %d\n", r, WTERMSIG(st));
      else fprintf(stderr, "PE %d: exit status %d\n", r, WEXITSTATUS(st));
      failed = 1;
      end_all(kids, pes, SIGTERM); /* the others would wait for it in a barrier */
    }
  }
  return failed;
}

int pe_spawn_run(int pes, int gpus, unsigned timeout_s, pe_spawn_main fn, void *user) {
  if (pes < 1 || pes > PE_SPAWN_MAX || gpus < 1) {
    fprintf(stderr, "pe_spawn_run: %d PE(s) on %d GPU(s): expected 1 ... %d PEs and a GPU\n", pes,
            gpus, PE_SPAWN_MAX);
    return 1;
  }
  /* Every PE is a child of this process, on this host: NVSHMEM's unique-id bootstrap may keep to
   * the loopback interface (unless the caller chose one). */
  setenv("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo", 0);
  int fds[2];
  if (pipe(fds) != 0) return perror("pe_spawn_run: pipe"), 1;
  pid_t kids[PE_SPAWN_MAX];
  fflush(stdout), fflush(stderr);
  int failed = 0;
  for (int r = 0; r < pes; r++) {
    if ((kids[r] = fork()) != 0) {
      failed |= kids[r] < 0;
      continue;
    }
    close(fds[r == 0 ? 0 : 1]); /* PE 0 writes the id, the others read it: EOF if PE 0 dies */
    int rc = pe_child(r, pes, gpus, fds[r == 0 ? 1 : 0], fn, user);
    fflush(stdout), fflush(stderr);
    _exit(rc);
  }
  close(fds[0]);
  close(fds[1]);
  if (failed) end_all(kids, pes, SIGTERM);
  return pe_wait(kids, pes, timeout_s) | failed;
}
