// --keep-best K: the K checkpoints with the best test accuracy, next to last.ckpt in --checkpoint-dir, named
// best-epoch<E>-acc<XX.XX>.ckpt so the folder lists them and a resumed run finds them again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fastloop {

class BestCheckpoints {
 public:
  /// `resume`: rank against the best-*.ckpt files already in `dir`; otherwise a new run replaces them.
  BestCheckpoints(std::string dir, int64_t keep, bool resume);

  /// After epoch `epoch` (0-based) reached `accuracy` (in [0, 1]): when it is among the best `keep`, calls
  /// `save` with the new file's path, then removes the file that fell out. Returns whether it saved.
  bool offer(double accuracy, int64_t epoch, const std::function<void(const std::string&)>& save);

  /// The kept files, best first.
  std::vector<std::string> files() const;

  /// The file name for `epoch` and `accuracy`.
  static std::string name(int64_t epoch, double accuracy);

 private:
  struct Entry {
    double accuracy;
    std::string path;
  };
  std::string dir_;
  int64_t keep_;
  std::vector<Entry> kept_;  // best first; ties: the earlier epoch first
};

} // namespace fastloop
