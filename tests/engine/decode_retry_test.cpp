#include "engine/decode_retry.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace tandem::engine {
namespace {

// A scripted llama_decode: records every call, fails the ones `fails` says, and keeps the
// tokens each owner has in its "KV cache" (in order, so a test sees nothing lost or doubled).
struct FakeDecoder {
  std::vector<DecodePart> parts;
  std::function<int(std::span<const DecodePiece>)> fails = [](auto) { return 0; };
  std::vector<size_t> call_sizes;                 // tokens per call, failed ones included
  std::map<size_t, std::vector<size_t>> decoded;  // owner -> token indices, in order
  std::map<size_t, int> failed;                   // owner -> code

  size_t run(size_t max_tokens) {
    DecodeCalls calls;
    calls.decode = [this](std::span<const DecodePiece> pieces) {
      size_t n = 0;
      for (const auto& piece : pieces) {
        n += piece.count;
      }
      call_sizes.push_back(n);
      return fails(pieces);
    };
    calls.decoded = [this](std::span<const DecodePiece> pieces) {
      for (const auto& piece : pieces) {
        auto& tokens = decoded[parts[piece.part].owner];
        for (size_t i = 0; i < piece.count; ++i) {
          tokens.push_back(piece.offset + i);
        }
      }
    };
    calls.failed = [this](size_t owner, int code) { failed[owner] = code; };
    return decode_with_retry(parts, max_tokens, calls);
  }
};

std::vector<size_t> indices(size_t n) {
  std::vector<size_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = i;
  }
  return out;
}

bool holds(std::span<const DecodePiece> pieces, const std::vector<DecodePart>& parts,
           size_t owner) {
  for (const auto& piece : pieces) {
    if (parts[piece.part].owner == owner) {
      return true;
    }
  }
  return false;
}

TEST(DecodeRetryTest, PartsShareOneCallWhenTheyFit) {
  FakeDecoder fake;
  fake.parts = {{0, 1}, {1, 1}, {2, 30}};
  EXPECT_EQ(fake.run(512), 0U);
  EXPECT_EQ(fake.call_sizes, (std::vector<size_t>{32}));
  EXPECT_EQ(fake.decoded[2], indices(30));
  EXPECT_TRUE(fake.failed.empty());
}

TEST(DecodeRetryTest, APromptLongerThanTheBatchIsSplitInOrder) {
  FakeDecoder fake;
  fake.parts = {{0, 1}, {1, 10}};
  EXPECT_EQ(fake.run(4), 0U);
  EXPECT_EQ(fake.call_sizes, (std::vector<size_t>{4, 4, 3}));
  EXPECT_EQ(fake.decoded[0], indices(1));
  EXPECT_EQ(fake.decoded[1], indices(10));
}

TEST(DecodeRetryTest, ABatchTooLargeToComputeIsRetriedInHalves) {
  FakeDecoder fake;
  fake.parts = {{0, 1}, {1, 1}, {2, 100}};
  // Like a compute buffer that cannot be allocated for more than 40 tokens at once.
  fake.fails = [](std::span<const DecodePiece> pieces) {
    size_t n = 0;
    for (const auto& piece : pieces) {
      n += piece.count;
    }
    return n > 40 ? -2 : 0;
  };
  EXPECT_EQ(fake.run(512), 2U);  // 102 fails, 51 fails, then calls of 25
  EXPECT_EQ(fake.call_sizes.front(), 102U);
  EXPECT_EQ(fake.call_sizes[1], 51U);
  EXPECT_EQ(fake.call_sizes[2], 25U);
  EXPECT_TRUE(fake.failed.empty());
  EXPECT_EQ(fake.decoded[0], indices(1));
  EXPECT_EQ(fake.decoded[1], indices(1));
  EXPECT_EQ(fake.decoded[2], indices(100));
}

TEST(DecodeRetryTest, OnlyTheRequestWhoseTokensFailAloneFails) {
  FakeDecoder fake;
  fake.parts = {{0, 1}, {1, 1}, {2, 20}, {3, 1}};
  const auto& parts = fake.parts;
  fake.fails = [&parts](std::span<const DecodePiece> pieces) {
    return holds(pieces, parts, 1) ? -3 : 0;
  };
  EXPECT_GT(fake.run(512), 0U);
  EXPECT_EQ(fake.failed, (std::map<size_t, int>{{1, -3}}));
  EXPECT_EQ(fake.decoded.count(1), 0U);
  EXPECT_EQ(fake.decoded[0], indices(1));
  EXPECT_EQ(fake.decoded[2], indices(20));
  EXPECT_EQ(fake.decoded[3], indices(1));
  // Once the cause is found the others go on at full size: the rest fits in one call.
  EXPECT_EQ(fake.call_sizes.back(), 21U);
}

TEST(DecodeRetryTest, APromptThatFailsPartWayKeepsWhatWasDecoded) {
  FakeDecoder fake;
  fake.parts = {{0, 1}, {5, 64}};
  // Token 40 of owner 5's prompt cannot be decoded.
  fake.fails = [](std::span<const DecodePiece> pieces) {
    for (const auto& piece : pieces) {
      if (piece.part == 1 && piece.offset <= 40 && 40 < piece.offset + piece.count) {
        return -1;
      }
    }
    return 0;
  };
  fake.run(512);
  EXPECT_EQ(fake.failed, (std::map<size_t, int>{{5, -1}}));
  EXPECT_EQ(fake.decoded[0], indices(1));
  EXPECT_EQ(fake.decoded[5], indices(40));  // everything before the bad token, once each
}

TEST(DecodeRetryTest, WhenNothingCanBeDecodedEveryRequestFailsAndTheLoopEnds) {
  FakeDecoder fake;
  fake.parts = {{0, 3}, {1, 1}, {2, 7}};
  fake.fails = [](auto) { return 1; };
  fake.run(8);
  EXPECT_EQ(fake.failed, (std::map<size_t, int>{{0, 1}, {1, 1}, {2, 1}}));
  EXPECT_TRUE(fake.decoded.empty());
  EXPECT_LT(fake.call_sizes.size(), 20U);
}

TEST(DecodeRetryTest, NoPartsNoCalls) {
  FakeDecoder fake;
  EXPECT_EQ(fake.run(512), 0U);
  EXPECT_TRUE(fake.call_sizes.empty());
  fake.parts = {{0, 0}};
  EXPECT_EQ(fake.run(512), 0U);
  EXPECT_TRUE(fake.call_sizes.empty());
}

}  // namespace
}  // namespace tandem::engine
