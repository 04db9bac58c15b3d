/*
 * round-model: a `.full` group-commit round modelled on raw LMDB, without Chronicle.
 *
 * THREADS threads commit ROUNDS transactions in all (1,200 unless given), each of PUTS puts of
 * 110-byte values (a ledger entry's size), taking a process-wide lock around the transaction as
 * Chronicle's leader does. The environment is made in a new directory under $TMPDIR (or /tmp) and
 * removed after.
 * Every TREE_EVERY entries one 32-byte put goes to a second database, as the Merkle tree stores a
 * 16-leaf subtree (0: never). CPU_LOCKED and CPU_AFTER microseconds of busy loop stand for the
 * processor time a round spends before its commit (staging, encoding) and after it (publishing,
 * waking the senders). With SPLIT=1 the environment is opened with MDB_NOMETASYNC and each thread
 * syncs (mdb_env_sync) after it leaves the lock, so that one round's meta sync overlaps the next
 * round's transaction; with SPLIT=0 LMDB's default commit syncs the data, then writes the meta page
 * with O_DSYNC, inside the lock.
 *
 * YIELDERS further threads call sched_yield() in a loop meanwhile, as senders waiting for their
 * round do before they sleep.
 *
 * Prints sends (puts per commit times commits) per second and microseconds per commit.
 * docs/performance-history.md ("The `.full` eight-sender row") quotes its runs.
 *
 *   cc -O2 -o round-model round-model.c -llmdb -lpthread
 *   ./round-model THREADS PUTS TREE_EVERY CPU_LOCKED CPU_AFTER SPLIT [ROUNDS [YIELDERS]]
 *   ./round-model 1 8 16 60 55 0     # one leader, rounds of eight, as measured
 *   ./round-model 1 1 16 8 6 0       # one sender
 *   ./round-model 2 4 16 30 28 1     # two groups of four, the meta sync outside the lock
 *   ./round-model 1 8 16 0 0 0 1200 7   # commits of eight beside seven yielding threads
 */
#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static MDB_env *env;
static MDB_dbi entries, tree;
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
static uint64_t entryCount, subtreeCount;
static int putsPerCommit, treeEvery, cpuLocked, cpuAfter, split;
static atomic_int done;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void busy(int microseconds) {
  double end = now() + microseconds / 1e6;
  while (now() < end) {}
}

static void check(int rc, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "round-model: %s: %s\n", what, mdb_strerror(rc));
    exit(1);
  }
}

static void put(MDB_txn *txn, MDB_dbi db, uint64_t seq, size_t size) {
  static const char value[110];
  uint64_t key = __builtin_bswap64(seq);
  MDB_val k = {sizeof key, &key}, v = {size, (void *)value};
  check(mdb_put(txn, db, &k, &v, MDB_APPEND), "put");
}

static void commitRound(void) {
  MDB_txn *txn;
  check(mdb_txn_begin(env, NULL, 0, &txn), "begin");
  for (int i = 0; i < putsPerCommit; i++) {
    put(txn, entries, ++entryCount, 110);
    if (treeEvery > 0 && entryCount % treeEvery == 0) put(txn, tree, ++subtreeCount, 32);
  }
  check(mdb_txn_commit(txn), "commit");
}

static void *yield(void *argument) {
  (void)argument;
  while (!atomic_load(&done)) sched_yield();
  return NULL;
}

static void *run(void *argument) {
  int rounds = *(int *)argument;
  for (int i = 0; i < rounds; i++) {
    pthread_mutex_lock(&writer);
    busy(cpuLocked);
    commitRound();
    pthread_mutex_unlock(&writer);
    if (split) check(mdb_env_sync(env, 1), "sync");
    busy(cpuAfter);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: round-model THREADS PUTS TREE_EVERY CPU_LOCKED CPU_AFTER SPLIT [ROUNDS [YIELDERS]]\n");
    return 2;
  }
  int threads = atoi(argv[1]);
  putsPerCommit = atoi(argv[2]);
  treeEvery = atoi(argv[3]);
  cpuLocked = atoi(argv[4]);
  cpuAfter = atoi(argv[5]);
  split = atoi(argv[6]);
  int rounds = argc > 7 ? atoi(argv[7]) : 1200;
  int yielders = argc > 8 ? atoi(argv[8]) : 0;
  if (threads < 1 || threads > 64 || putsPerCommit < 1 || yielders < 0 || yielders > 64) {
    fprintf(stderr, "round-model: THREADS must be 1-64, PUTS at least 1 and YIELDERS 0-64\n");
    return 2;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[512];
  snprintf(dir, sizeof dir, "%s/round-model-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("round-model: mkdtemp");
    return 1;
  }
  check(mdb_env_create(&env), "create");
  check(mdb_env_set_mapsize(env, (size_t)1 << 30), "map size");
  check(mdb_env_set_maxdbs(env, 2), "databases");
  check(mdb_env_open(env, dir, split ? MDB_NOMETASYNC : 0, 0644), dir);
  MDB_txn *txn;
  check(mdb_txn_begin(env, NULL, 0, &txn), "begin");
  check(mdb_dbi_open(txn, "entries", MDB_CREATE, &entries), "entries");
  check(mdb_dbi_open(txn, "tree", MDB_CREATE, &tree), "tree");
  check(mdb_txn_commit(txn), "commit");

  int perThread = rounds / threads;
  pthread_t workers[64], yielding[64];
  for (int i = 0; i < yielders; i++) pthread_create(&yielding[i], NULL, yield, NULL);
  double start = now();
  for (int i = 0; i < threads; i++) pthread_create(&workers[i], NULL, run, &perThread);
  for (int i = 0; i < threads; i++) pthread_join(workers[i], NULL);
  double elapsed = now() - start;
  atomic_store(&done, 1);
  for (int i = 0; i < yielders; i++) pthread_join(yielding[i], NULL);
  int commits = perThread * threads;
  printf("%.0f sends/s, %.1f us per commit\n", commits * putsPerCommit / elapsed, elapsed / commits * 1e6);

  mdb_env_close(env);
  char path[600];
  snprintf(path, sizeof path, "%s/data.mdb", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/lock.mdb", dir);
  remove(path);
  remove(dir);
  return 0;
}
