#define _POSIX_C_SOURCE 200809L
/* The cache as a security boundary (src/core/cache_file.h): a round
 * trip; damaged, foreign and truncated entries; and what must be ignored
 * because someone other than the user could have written it or because
 * reading it would block: a FIFO, a symlink, a group- or world-writable
 * file, a world-writable directory. New directories are 0700; temporary
 * files of dead writers are removed, a live writer's kept. */
#include "core/cache_file.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char MAGIC[8] = "DGTEST01";
static const char KEY[] = "key 1";
static char root[64], dir[128], path[256];

static dg_cache_result load(size_t *size) {
  void *data = NULL;
  dg_cache_result r =
      dg_cache_load(path, MAGIC, KEY, sizeof KEY, 1 << 20, &data, size);
  free(data);
  return r;
}

static bool store(void) {
  static const char payload[] = "the payload";
  return dg_cache_store(path, MAGIC, KEY, sizeof KEY, payload, sizeof payload);
}

static void flip_byte(long at) {
  int fd = open(path, O_RDWR);
  unsigned char c = 0;
  if (fd >= 0 && pread(fd, &c, 1, at) == 1) {
    c ^= 0x40;
    if (pwrite(fd, &c, 1, at) != 1)
      c = 0;
  }
  if (fd >= 0)
    close(fd);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/dg-cache-test-XXXXXX");
  if (!mkdtemp(root)) {
    CHECK(0, "temporary directory");
    return t_exit();
  }
  snprintf(dir, sizeof dir, "%s/a/b", root);
  snprintf(path, sizeof path, "%s/entry.bin", dir);
  size_t size = 0;

  CHECK(load(&size) == DG_CACHE_MISSING, "no file: missing");
  CHECK(store(), "store creates the directories and the file");
  /* (Each check's figures are computed before it: C leaves the order of
   * a call's arguments open.) */
  struct stat st;
  unsigned mode = stat(dir, &st) == 0 ? (unsigned)(st.st_mode & 0777) : 0;
  CHECK(mode == 0700, "a directory the cache creates is 0700 (%o)", mode);
  mode = stat(path, &st) == 0 ? (unsigned)(st.st_mode & 0777) : 0;
  CHECK(mode == 0600, "a file the cache writes is 0600 (%o)", mode);
  dg_cache_result r = load(&size);
  CHECK(r == DG_CACHE_LOADED && size == sizeof "the payload",
        "round trip (%zu bytes)", size);

  void *data = NULL;
  CHECK(dg_cache_load(path, MAGIC, "key 2", 6, 1 << 20, &data, &size) ==
                DG_CACHE_REJECTED &&
            !data,
        "another key: rejected");
  CHECK(dg_cache_load(path, "DGTEST02", KEY, sizeof KEY, 1 << 20, &data,
                      &size) == DG_CACHE_REJECTED,
        "another magic: rejected");
  flip_byte((long)(28 + sizeof KEY + 2));
  CHECK(load(&size) == DG_CACHE_REJECTED, "a flipped payload byte: rejected");
  CHECK(store() && truncate(path, 30) == 0 && load(&size) == DG_CACHE_REJECTED,
        "a truncated file: rejected");

  CHECK(store() && chmod(path, 0666) == 0 && load(&size) == DG_CACHE_REJECTED,
        "a world-writable file: rejected");
  CHECK(chmod(path, 0620) == 0 && load(&size) == DG_CACHE_REJECTED,
        "a group-writable file: rejected");
  CHECK(chmod(path, 0600) == 0 && load(&size) == DG_CACHE_LOADED,
        "the same file made private again: loaded");

  char target[300];
  snprintf(target, sizeof target, "%s/real.bin", dir);
  CHECK(rename(path, target) == 0 && symlink(target, path) == 0 &&
            load(&size) == DG_CACHE_REJECTED,
        "a symlink in place of the file: rejected (O_NOFOLLOW)");
  unlink(path);
  unlink(target);

  /* A FIFO would block a plain open() until a writer came: the load must
   * come back at once (a hang here fails the test on its timeout). */
  CHECK(mkfifo(path, 0600) == 0 && load(&size) == DG_CACHE_REJECTED,
        "a FIFO in place of the file: rejected without blocking");
  unlink(path);

  CHECK(store() && chmod(dir, 0777) == 0 && load(&size) == DG_CACHE_REJECTED,
        "a world-writable directory: its files are rejected");
  CHECK(!store(), "and nothing is written there");
  chmod(dir, 0700);

  /* Temporary files: a dead writer's is removed, a live one's kept. */
  pid_t child = fork();
  if (child == 0)
    _exit(0);
  waitpid(child, NULL, 0); /* child's pid is now a dead process's */
  char dead[400], live[400];
  snprintf(dead, sizeof dead, "%s.tmp.%ld.0", path, (long)child);
  snprintf(live, sizeof live, "%s.tmp.%ld.0", path, (long)getppid());
  int fd1 = open(dead, O_WRONLY | O_CREAT, 0600),
      fd2 = open(live, O_WRONLY | O_CREAT, 0600);
  if (fd1 >= 0)
    close(fd1);
  if (fd2 >= 0)
    close(fd2);
  CHECK(fd1 >= 0 && fd2 >= 0 && store() && access(dead, F_OK) != 0 &&
            access(live, F_OK) == 0,
        "a write removes a dead writer's temporary file and keeps a live "
        "one's");
  unlink(live);
  unlink(path);

  CHECK(!dg_cache_dir_trusted("/tmp") && dg_cache_dir_trusted(dir),
        "/tmp (sticky, world-writable) is not a trusted cache directory; a "
        "0700 one is");
  /* A symlink to a trusted directory is not one, however it is written:
   * with a trailing "/" or "/." lstat would follow it. */
  char link[160], spelt[200];
  snprintf(link, sizeof link, "%s/link", root);
  bool made = symlink(dir, link) == 0;
  const char *tails[] = {"", "/", "/.", "//", "/./", "/././"};
  for (int i = 0; i < 6; i++) {
    snprintf(spelt, sizeof spelt, "%s%s", link, tails[i]);
    CHECK(made && !dg_cache_dir_trusted(spelt),
          "a symlink to a trusted directory, given as '<link>%s', is not "
          "trusted",
          tails[i]);
    snprintf(spelt, sizeof spelt, "%s%s", dir, tails[i]);
    CHECK(dg_cache_dir_trusted(spelt),
          "the directory itself, given as '<dir>%s', is trusted", tails[i]);
  }
  unlink(link);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  if (system(cmd) != 0)
    t_skip("could not remove the temporary directory");
  return t_exit();
}
