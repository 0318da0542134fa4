#include "routing/prompt_cues_zh.h"

#include <iterator>

#include "common/utf8.h"
#include "routing/prompt_feature_ids.h"
#include "routing/prompt_vocabulary.h"

namespace tandem::routing {
namespace {

// Small on purpose, like the English vocabulary: the words that signal the category in an
// instruction. When two phrases end at the same character the longer one counts.
constexpr ZhCue kCues[] = {
    // Tasks a small model does well: transform or pick from the given text.
    {"翻译", "easy_task_cues"},
    {"译成", "easy_task_cues"},
    {"分类", "easy_task_cues"},
    {"归类", "easy_task_cues"},
    {"提取", "easy_task_cues"},
    {"抽取", "easy_task_cues"},
    {"摘要", "easy_task_cues"},
    {"概括", "easy_task_cues"},
    {"总结", "easy_task_cues"},
    {"格式化", "easy_task_cues"},
    {"改写", "easy_task_cues"},
    {"润色", "easy_task_cues"},
    {"换算", "easy_task_cues"},
    {"转换", "easy_task_cues"},
    {"转成", "easy_task_cues"},
    {"情感", "easy_task_cues"},
    {"情绪", "easy_task_cues"},
    {"正面", "easy_task_cues"},
    {"负面", "easy_task_cues"},
    {"标注", "easy_task_cues"},
    {"标签", "easy_task_cues"},
    {"列出", "easy_task_cues"},
    {"纠正", "easy_task_cues"},
    {"校对", "easy_task_cues"},
    {"错别字", "easy_task_cues"},
    {"同义词", "easy_task_cues"},
    {"反义词", "easy_task_cues"},
    {"缩写", "easy_task_cues"},
    {"大写", "easy_task_cues"},
    {"排序", "easy_task_cues"},
    {"整理成", "easy_task_cues"},
    {"表格", "easy_task_cues"},
    {"摘出", "easy_task_cues"},
    {"改名", "easy_task_cues"},
    {"标题", "easy_task_cues"},
    // Binary answers.
    {"是否", "yes_no_cues"},
    {"是不是", "yes_no_cues"},
    {"对不对", "yes_no_cues"},
    {"对吗", "yes_no_cues"},
    {"有没有", "yes_no_cues"},
    {"能不能", "yes_no_cues"},
    {"判断", "yes_no_cues"},
    {"真假", "yes_no_cues"},
    // Factoid questions.
    {"什么是", "factoid_cues"},
    {"是什么", "factoid_cues"},
    {"谁是", "factoid_cues"},
    {"是谁", "factoid_cues"},
    {"哪一年", "factoid_cues"},
    {"哪个", "factoid_cues"},
    {"哪里", "factoid_cues"},
    {"哪些", "factoid_cues"},
    {"首都", "factoid_cues"},
    {"何时", "factoid_cues"},
    {"几点", "factoid_cues"},
    {"定义", "factoid_cues"},
    {"哪", "factoid_cues"},
    {"几", "factoid_cues"},
    // Tasks that need planning, proof or open-ended judgement.
    {"证明", "hard_task_cues"},
    {"推导", "hard_task_cues"},
    {"设计", "hard_task_cues"},
    {"架构", "hard_task_cues"},
    {"分析", "hard_task_cues"},
    {"评估", "hard_task_cues"},
    {"评价", "hard_task_cues"},
    {"比较", "hard_task_cues"},
    {"对比", "hard_task_cues"},
    {"权衡", "hard_task_cues"},
    {"方案", "hard_task_cues"},
    {"策略", "hard_task_cues"},
    {"规划", "hard_task_cues"},
    {"计划", "hard_task_cues"},
    {"论述", "hard_task_cues"},
    {"研究", "hard_task_cues"},
    {"优化", "hard_task_cues"},
    {"调试", "hard_task_cues"},
    {"重构", "hard_task_cues"},
    {"实现", "hard_task_cues"},
    {"风险", "hard_task_cues"},
    {"利弊", "hard_task_cues"},
    {"综述", "hard_task_cues"},
    {"批判", "hard_task_cues"},
    {"排查", "hard_task_cues"},
    {"该不该", "hard_task_cues"},
    {"要不要", "hard_task_cues"},
    {"取舍", "hard_task_cues"},
    // Explicit reasoning.
    {"为什么", "reasoning_cues"},
    {"原因", "reasoning_cues"},
    {"推理", "reasoning_cues"},
    {"推断", "reasoning_cues"},
    {"论证", "reasoning_cues"},
    {"解释", "reasoning_cues"},
    {"逐步", "reasoning_cues"},
    {"一步一步", "reasoning_cues"},
    {"一步步", "reasoning_cues"},
    {"步骤", "reasoning_cues"},
    {"假设", "reasoning_cues"},
    {"因此", "reasoning_cues"},
    {"逻辑", "reasoning_cues"},
    {"如何", "reasoning_cues"},
    {"怎样", "reasoning_cues"},
    {"怎么", "reasoning_cues"},
    // Open-ended generation.
    {"故事", "creative_cues"},
    {"小说", "creative_cues"},
    {"诗", "creative_cues"},
    {"散文", "creative_cues"},
    {"剧本", "creative_cues"},
    {"创作", "creative_cues"},
    {"文章", "creative_cues"},
    {"歌词", "creative_cues"},
    {"对联", "creative_cues"},
    {"情节", "creative_cues"},
    {"续写", "creative_cues"},
    {"想象", "creative_cues"},
    {"文案", "creative_cues"},
    {"写一", "creative_cues"},
    {"编写", "creative_cues"},
    // Constraints on the answer.
    {"至少", "constraint_cues"},
    {"不超过", "constraint_cues"},
    {"不少于", "constraint_cues"},
    {"必须", "constraint_cues"},
    {"要求", "constraint_cues"},
    {"以内", "constraint_cues"},
    {"限制", "constraint_cues"},
    {"同时", "constraint_cues"},
    {"每个", "constraint_cues"},
    {"不得", "constraint_cues"},
    // Maths.
    {"计算", "math_terms"},
    {"方程", "math_terms"},
    {"求解", "math_terms"},
    {"概率", "math_terms"},
    {"积分", "math_terms"},
    {"导数", "math_terms"},
    {"矩阵", "math_terms"},
    {"几何", "math_terms"},
    {"面积", "math_terms"},
    {"百分之", "math_terms"},
    {"平均", "math_terms"},
    {"总共", "math_terms"},
    {"一共", "math_terms"},
    {"多少", "math_terms"},
    {"利润", "math_terms"},
    {"公式", "math_terms"},
    {"素数", "math_terms"},
    {"质数", "math_terms"},
    {"定理", "math_terms"},
    // Code.
    {"代码", "code_keywords"},
    {"编程", "code_keywords"},
    {"程序", "code_keywords"},
    {"函数", "code_keywords"},
    {"算法", "code_keywords"},
    {"接口", "code_keywords"},
    {"数据库", "code_keywords"},
    {"报错", "code_keywords"},
    {"脚本", "code_keywords"},
    {"并发", "code_keywords"},
    {"线程", "code_keywords"},
    {"分布式", "code_keywords"},
    {"服务器", "code_keywords"},
    {"缓存", "code_keywords"},
    // Negations ("which is NOT").
    {"不是", "negation_cues"},
    {"错误的", "negation_cues"},
    {"不正确", "negation_cues"},
    {"除了", "negation_cues"},
    {"不属于", "negation_cues"},
    // Specialist vocabulary.
    {"患者", "domain_terms"},
    {"诊断", "domain_terms"},
    {"治疗", "domain_terms"},
    {"症状", "domain_terms"},
    {"药物", "domain_terms"},
    {"法律", "domain_terms"},
    {"合同", "domain_terms"},
    {"条款", "domain_terms"},
    {"诉讼", "domain_terms"},
    {"责任", "domain_terms"},
    {"金融", "domain_terms"},
    {"投资", "domain_terms"},
    {"税", "domain_terms"},
    {"经济", "domain_terms"},
    {"通胀", "domain_terms"},
    {"量子", "domain_terms"},
    {"基因", "domain_terms"},
    {"蛋白", "domain_terms"},
};

}  // namespace

std::span<const ZhCue> zh_cues() {
  return {kCues, std::size(kCues)};
}

ZhCueTable::ZhCueTable() {
  cues_.assign(zh_cues().begin(), zh_cues().end());
  cues_.insert(cues_.end(), ja_ko_cues().begin(), ja_ko_cues().end());
  const auto& cues = cues_;
  for (size_t i = 0; i < cues.size(); ++i) {
    size_t slot = prompt_detail::fnv1a(cues[i].phrase) & (kSlots - 1);
    while (slots_[slot] != 0) {
      slot = (slot + 1) & (kSlots - 1);
    }
    slots_[slot] = static_cast<uint16_t>(i + 1);
    const size_t feature = feature_index(cues[i].feature);
    features_[i] =
        static_cast<uint8_t>(feature < kFeatureCount ? feature : size_t{prompt_detail::kNoCue});
    const auto [previous, last] = last_two_code_points(cues[i].phrase);
    if (previous == 0) {
      set(singles_, last);
    } else {
      set(pairs_, pair_key(previous, last));
    }
  }
}

uint8_t ZhCueTable::find(std::string_view phrase) const {
  const auto& cues = cues_;
  size_t slot = prompt_detail::fnv1a(phrase) & (kSlots - 1);
  while (slots_[slot] != 0) {
    const size_t index = slots_[slot] - 1u;
    if (cues[index].phrase == phrase) {
      return features_[index];
    }
    slot = (slot + 1) & (kSlots - 1);
  }
  return prompt_detail::kNoCue;
}

// The phrases are valid UTF-8 by construction.
std::pair<uint32_t, uint32_t> ZhCueTable::last_two_code_points(std::string_view text) {
  uint32_t previous = 0;
  uint32_t last = 0;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    i += decode_utf8(text, i, cp);
    previous = last;
    last = cp;
  }
  return {previous, last};
}

const ZhCueTable& zh_cue_table() {
  static const ZhCueTable table;
  return table;
}

}  // namespace tandem::routing
