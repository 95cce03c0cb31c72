# Homebrew formula for stagebench. The repository is its own tap (this file is Formula/ in it):
#   brew tap stagebench/local /path/to/a/clone/of/stagebench
#   brew install --HEAD stagebench/local/stagebench
# Not run here (no Mac): checked with `ruby -c`, and its make variables against
# scripts/cross-macos.sh's (tests/e2e/formula.sh).
class Stagebench < Formula
  desc "Memory of multi-stage PyTorch pipelines, eager against staged, per stage"
  homepage "https://stagebench.invalid" # no public home yet: the tap is a clone
  # The tap is a clone of the repository: HEAD builds that clone's checked-out branch.
  head "file://#{File.expand_path("..", __dir__)}", using: :git

  depends_on "pkgconf" => :build
  depends_on "gnuplot"
  depends_on "jansson"
  depends_on "numpy"
  depends_on "python@3.13"
  depends_on "zstd"
  depends_on "pytorch" => :recommended

  def install
    zstd = Formula["zstd"]
    jansson = Formula["jansson"]
    # The make call of the macOS cross build (scripts/cross-macos.sh), with Homebrew's
    # compiler and libraries in place of zig's and the ones it builds.
    args = [
      "UNAME_S=Darwin",
      "PKG_CONFIG=false",
      "PKG_CFLAGS=-I#{zstd.opt_include} -I#{jansson.opt_include}",
      "PKG_LIBS=-L#{zstd.opt_lib} -lzstd -L#{jansson.opt_lib} -ljansson",
    ]
    system "make", *args, "stagebench"
    system "make", *args, "install", "PREFIX=#{prefix}", "MANDIR=#{man}",
           "BASH_COMPDIR=#{bash_completion}", "ZSH_COMPDIR=#{zsh_completion}"
  end

  def caveats
    <<~EOS
      stagebench runs pipelines with $STAGEBENCH_PYTHON, else /usr/bin/python3 (which has no
      torch on macOS). To use Homebrew's Python, where pytorch and numpy are installed:
        export STAGEBENCH_PYTHON=#{Formula["python@3.13"].opt_bin}/python3.13
    EOS
  end

  test do
    assert_match "stagebench", shell_output("#{bin}/stagebench --version")
    assert_match "compare", shell_output("#{bin}/stagebench --help")
    assert_path_exists share/"stagebench/demo/pipeline.json"
    assert_path_exists man1/"stagebench-check.1"
  end
end
