#include <iterator>

#include "routing/prompt_cues_zh.h"

namespace tandem::routing {
namespace {

// Japanese and Korean task cues, phrases of one to four characters like the Chinese ones and
// counted toward the same features. Written from the seeds' decision framework, not fitted to
// any data. Japanese phrases use the forms Japanese writes and simplified Chinese does not
// (証明, not 证明; 翻訳, not 翻译), or kana, so that Chinese text reads as before; a phrase
// the two languages share with another meaning (整形, 考察, 脚本) is left out. Korean phrases
// end where a particle or ending may follow ("증명하고" holds 증명).
constexpr ZhCue kCues[] = {
    // Japanese.
    // Tasks a small model does well: transform or pick from the given text.
    {"翻訳", "easy_task_cues"},
    {"英訳", "easy_task_cues"},
    {"和訳", "easy_task_cues"},
    {"分類", "easy_task_cues"},
    {"抽出し", "easy_task_cues"},
    {"抜き出", "easy_task_cues"},
    {"要約", "easy_task_cues"},
    {"まとめ", "easy_task_cues"},
    {"変換", "easy_task_cues"},
    {"換算", "easy_task_cues"},
    {"添削", "easy_task_cues"},
    {"言い換", "easy_task_cues"},
    {"書き換", "easy_task_cues"},
    {"並べ替", "easy_task_cues"},
    {"誤字", "easy_task_cues"},
    {"箇条書", "easy_task_cues"},
    // Binary answers.
    {"かどうか", "yes_no_cues"},
    {"いいえ", "yes_no_cues"},
    {"正しいか", "yes_no_cues"},
    // Factoid questions.
    {"誰", "factoid_cues"},
    {"いつ", "factoid_cues"},
    {"どこ", "factoid_cues"},
    {"とは", "factoid_cues"},
    {"何年", "factoid_cues"},
    {"何です", "factoid_cues"},
    // Tasks that need planning, proof or open-ended judgement.
    {"証明", "hard_task_cues"},
    {"示せ", "hard_task_cues"},
    {"導出", "hard_task_cues"},
    {"設計", "hard_task_cues"},
    {"評価", "hard_task_cues"},
    {"比較", "hard_task_cues"},
    {"最適化", "hard_task_cues"},
    {"実装", "hard_task_cues"},
    {"戦略", "hard_task_cues"},
    {"計画", "hard_task_cues"},
    {"論じ", "hard_task_cues"},
    {"検討", "hard_task_cues"},
    {"リスク", "hard_task_cues"},
    {"構築", "hard_task_cues"},
    {"アルゴリ", "hard_task_cues"},
    {"論証", "hard_task_cues"},
    // Explicit reasoning.
    {"説明", "reasoning_cues"},
    {"なぜ", "reasoning_cues"},
    {"推論", "reasoning_cues"},
    {"論理", "reasoning_cues"},
    {"仮説", "reasoning_cues"},
    {"段階的", "reasoning_cues"},
    {"ステップ", "reasoning_cues"},
    // Open-ended generation.
    {"小説", "creative_cues"},
    {"物語", "creative_cues"},
    {"短編", "creative_cues"},
    {"詩", "creative_cues"},
    {"俳句", "creative_cues"},
    {"書いて", "creative_cues"},
    {"創作", "creative_cues"},
    {"歌詞", "creative_cues"},
    {"随筆", "creative_cues"},
    {"エッセイ", "creative_cues"},
    // Constraints on the answer.
    {"必ず", "constraint_cues"},
    {"厳密", "constraint_cues"},
    {"正確に", "constraint_cues"},
    // Maths.
    {"計算", "math_terms"},
    {"確率", "math_terms"},
    {"積分", "math_terms"},
    {"行列", "math_terms"},
    // Code.
    {"コード", "code_keywords"},
    {"関数", "code_keywords"},
    {"プログラ", "code_keywords"},
    // Specialist vocabulary.
    {"診断", "domain_terms"},
    {"治療", "domain_terms"},
    {"契約", "domain_terms"},
    {"法的", "domain_terms"},
    // Korean.
    // Tasks a small model does well: transform or pick from the given text.
    {"번역", "easy_task_cues"},
    {"분류", "easy_task_cues"},
    {"추출", "easy_task_cues"},
    {"요약", "easy_task_cues"},
    {"정리해", "easy_task_cues"},
    {"변환", "easy_task_cues"},
    {"환산", "easy_task_cues"},
    {"교정", "easy_task_cues"},
    {"맞춤법", "easy_task_cues"},
    {"바꿔", "easy_task_cues"},
    {"감정", "easy_task_cues"},
    {"나열", "easy_task_cues"},
    {"고쳐", "easy_task_cues"},
    // Binary answers.
    {"아니오", "yes_no_cues"},
    {"아니요", "yes_no_cues"},
    {"맞는지", "yes_no_cues"},
    {"참인지", "yes_no_cues"},
    // Factoid questions.
    {"수도", "factoid_cues"},
    {"누구", "factoid_cues"},
    {"언제", "factoid_cues"},
    {"어디", "factoid_cues"},
    {"무엇", "factoid_cues"},
    {"몇", "factoid_cues"},
    // Tasks that need planning, proof or open-ended judgement.
    {"증명", "hard_task_cues"},
    {"설계", "hard_task_cues"},
    {"분석", "hard_task_cues"},
    {"평가", "hard_task_cues"},
    {"비교", "hard_task_cues"},
    {"최적화", "hard_task_cues"},
    {"구현", "hard_task_cues"},
    {"전략", "hard_task_cues"},
    {"계획", "hard_task_cues"},
    {"검토", "hard_task_cues"},
    {"위험", "hard_task_cues"},
    {"리스크", "hard_task_cues"},
    {"알고리즘", "hard_task_cues"},
    {"분산", "hard_task_cues"},
    {"아키텍", "hard_task_cues"},
    {"논증", "hard_task_cues"},
    {"제안", "hard_task_cues"},
    // Explicit reasoning.
    {"설명", "reasoning_cues"},
    {"이유", "reasoning_cues"},
    {"왜", "reasoning_cues"},
    {"추론", "reasoning_cues"},
    {"논리", "reasoning_cues"},
    {"가설", "reasoning_cues"},
    {"단계별", "reasoning_cues"},
    // Open-ended generation.
    {"소설", "creative_cues"},
    {"이야기", "creative_cues"},
    {"단편", "creative_cues"},
    {"시를", "creative_cues"},
    {"창작", "creative_cues"},
    {"대본", "creative_cues"},
    {"가사", "creative_cues"},
    {"에세이", "creative_cues"},
    {"줄거리", "creative_cues"},
    {"작성", "creative_cues"},
    // Constraints on the answer.
    {"반드시", "constraint_cues"},
    {"이내", "constraint_cues"},
    {"정확히", "constraint_cues"},
    {"최소", "constraint_cues"},
    {"최대", "constraint_cues"},
    // Maths.
    {"계산", "math_terms"},
    {"방정식", "math_terms"},
    {"확률", "math_terms"},
    {"적분", "math_terms"},
    {"미분", "math_terms"},
    {"행렬", "math_terms"},
    {"소수", "math_terms"},
    // Code.
    {"코드", "code_keywords"},
    {"함수", "code_keywords"},
    {"프로그램", "code_keywords"},
    // Specialist vocabulary.
    {"환자", "domain_terms"},
    {"진단", "domain_terms"},
    {"치료", "domain_terms"},
    {"증상", "domain_terms"},
    {"계약", "domain_terms"},
    {"법률", "domain_terms"},
    {"법적", "domain_terms"},
    {"판례", "domain_terms"},
    {"세금", "domain_terms"},
};

}  // namespace

std::span<const ZhCue> ja_ko_cues() {
  return kCues;
}

}  // namespace tandem::routing
