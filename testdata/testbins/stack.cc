// A small bounded stack and its GoogleTest tests, built for wasm32-wasi:
// each test takes different paths through the same code.
#include <gtest/gtest.h>

#include <string>

namespace {

// Stack holds at most N ints.
template <int N>
class Stack {
 public:
  bool Push(int v) {
    if (n_ == N) return false;
    items_[n_++] = v;
    return true;
  }
  bool Pop(int* v) {
    if (n_ == 0) return false;
    *v = items_[--n_];
    return true;
  }
  int Size() const { return n_; }

 private:
  int items_[N];
  int n_ = 0;
};

// Reverse spells s backwards through a stack of its characters.
std::string Reverse(const std::string& s) {
  Stack<64> st;
  for (char c : s) {
    if (!st.Push(c)) return "";
  }
  std::string out;
  int c;
  while (st.Pop(&c)) out += static_cast<char>(c);
  return out;
}

TEST(Stack, PushPop) {
  Stack<4> s;
  EXPECT_TRUE(s.Push(1));
  EXPECT_TRUE(s.Push(2));
  int v = 0;
  EXPECT_TRUE(s.Pop(&v));
  EXPECT_EQ(v, 2);
  EXPECT_EQ(s.Size(), 1);
}

TEST(Stack, Full) {
  Stack<2> s;
  EXPECT_TRUE(s.Push(1));
  EXPECT_TRUE(s.Push(2));
  EXPECT_FALSE(s.Push(3));
}

TEST(Stack, EmptyPop) {
  Stack<2> s;
  int v = 7;
  EXPECT_FALSE(s.Pop(&v));
  EXPECT_EQ(v, 7);
}

TEST(Reverse, Word) { EXPECT_EQ(Reverse("path"), "htap"); }

TEST(Reverse, TooLong) { EXPECT_EQ(Reverse(std::string(100, 'x')), ""); }

class Palindrome : public ::testing::TestWithParam<const char*> {};

TEST_P(Palindrome, ReadsAlike) {
  std::string s = GetParam();
  EXPECT_EQ(Reverse(s), s);
}

INSTANTIATE_TEST_SUITE_P(Words, Palindrome, ::testing::Values("level", "noon", "a"));

}  // namespace
