#include "routing/prompt_cues_th.h"

#include <array>
#include <iterator>

#include "routing/prompt_feature_ids.h"
#include "routing/prompt_vocabulary.h"

namespace tandem::routing::prompt_detail {
namespace {

// clang-format off: one line per phrase reads as a lexicon
constexpr ThaiCue kCues[] = {
    // Tasks a small model does well: translate, classify, extract, summarise, rewrite, proofread,
    // convert.
    {"แปลเป็น", kEasyTaskCues},
    {"ช่วยแปล", kEasyTaskCues},
    {"แปลให้", kEasyTaskCues},
    {"แปลประโยค", kEasyTaskCues},
    {"แปลข้อความ", kEasyTaskCues},
    {"จัดหมวดหมู่", kEasyTaskCues},
    {"จัดประเภท", kEasyTaskCues},
    {"ดึงข้อมูล", kEasyTaskCues},
    {"ช่วยสรุป", kEasyTaskCues},
    {"สรุปให้", kEasyTaskCues},
    {"สรุปใจความ", kEasyTaskCues},
    {"สรุปสั้น", kEasyTaskCues},
    {"บทสรุป", kEasyTaskCues},
    {"ย่อความ", kEasyTaskCues},
    {"เขียนใหม่", kEasyTaskCues},
    {"ปรับสำนวน", kEasyTaskCues},
    {"คำผิด", kEasyTaskCues},
    {"ไวยากรณ์", kEasyTaskCues},
    {"สะกดผิด", kEasyTaskCues},
    {"ตรวจทาน", kEasyTaskCues},
    {"พิสูจน์อักษร", kEasyTaskCues},
    {"การพิสูจน์อักษร", kEasyTaskCues},
    {"แปลงหน่วย", kEasyTaskCues},
    {"ฟาเรนไฮต์", kEasyTaskCues},
    {"จัดรูปแบบ", kEasyTaskCues},
    {"เชิงบวกหรือ", kEasyTaskCues},
    // Binary answers.
    {"ใช่หรือไม่", kYesNoCues},
    {"จริงหรือไม่", kYesNoCues},
    {"ถูกต้องไหม", kYesNoCues},
    {"หรือเปล่า", kYesNoCues},
    {"ใช่ไหม", kYesNoCues},
    {"จริงหรือเท็จ", kYesNoCues},
    {"ถูกหรือผิด", kYesNoCues},
    // Factoid questions ("ใคร" alone sits inside "ใคร่", so only its question forms).
    {"ใครคือ", kFactoidCues},
    {"คือใคร", kFactoidCues},
    {"ใครเป็น", kFactoidCues},
    {"ใครเขียน", kFactoidCues},
    {"เมื่อไหร่", kFactoidCues},
    {"เมื่อไร", kFactoidCues},
    {"ที่ไหน", kFactoidCues},
    {"คืออะไร", kFactoidCues},
    {"ชื่ออะไร", kFactoidCues},
    {"ปีไหน", kFactoidCues},
    {"เท่าไหร่", kFactoidCues},
    // Tasks that need planning, proof or open-ended judgement.
    {"จงพิสูจน์", kHardTaskCues},
    {"พิสูจน์ว่า", kHardTaskCues},
    {"การพิสูจน์", kHardTaskCues},
    {"บทพิสูจน์", kHardTaskCues},
    {"จงแสดงว่า", kHardTaskCues},
    {"ออกแบบ", kHardTaskCues},
    {"สถาปัตยกรรม", kHardTaskCues},
    {"ช่วยวางแผน", kHardTaskCues},
    {"วางแผนให้", kHardTaskCues},
    {"แผนธุรกิจ", kHardTaskCues},
    {"โรดแมป", kHardTaskCues},
    {"จงวิเคราะห์", kHardTaskCues},
    {"ช่วยวิเคราะห์", kHardTaskCues},
    {"วิเคราะห์ข้อ", kHardTaskCues},
    {"วิเคราะห์ให้", kHardTaskCues},
    {"การวิเคราะห์", kHardTaskCues},
    {"ช่วยประเมิน", kHardTaskCues},
    {"เปรียบเทียบ", kHardTaskCues},
    {"ข้อดีข้อเสีย", kHardTaskCues},
    {"ออปติไมซ์", kHardTaskCues},
    {"ดีบัก", kHardTaskCues},
    {"บั๊ก", kHardTaskCues},
    {"รีแฟกเตอร์", kHardTaskCues},
    {"อิมพลีเมนต์", kHardTaskCues},
    {"กลยุทธ์", kHardTaskCues},
    {"อัลกอริ", kHardTaskCues},
    {"สังเคราะห์", kHardTaskCues},
    {"ย้ายระบบ", kHardTaskCues},
    // Explicit reasoning ("ทำไม" also sits in the rare "ทำไม้", where a tone mark follows).
    {"ช่วยอธิบาย", kReasoningCues},
    {"จงอธิบาย", kReasoningCues},
    {"ทำไม", kReasoningCues},
    {"เหตุใด", kReasoningCues},
    {"เพราะอะไร", kReasoningCues},
    {"ให้เหตุผล", kReasoningCues},
    {"ทีละขั้น", kReasoningCues},
    {"ตรรกะ", kReasoningCues},
    {"อนุมาน", kReasoningCues},
    {"สมมติฐาน", kReasoningCues},
    {"สมมติว่า", kReasoningCues},
    {"สมมุติว่า", kReasoningCues},
    // Open-ended generation.
    {"แต่งเรื่อง", kCreativeCues},
    {"แต่งกลอน", kCreativeCues},
    {"แต่งเพลง", kCreativeCues},
    {"เรื่องสั้น", kCreativeCues},
    {"นิยาย", kCreativeCues},
    {"บทกวี", kCreativeCues},
    {"เนื้อเพลง", kCreativeCues},
    {"เรียงความ", kCreativeCues},
    {"ไฮกุ", kCreativeCues},
    {"บทสนทนา", kCreativeCues},
    {"บทภาพยนตร์", kCreativeCues},
    {"สโลแกน", kCreativeCues},
    {"มุกตลก", kCreativeCues},
    {"จินตนาการ", kCreativeCues},
    {"ระดมสมอง", kCreativeCues},
    {"เขียนบทความ", kCreativeCues},
    // Constraints on the answer.
    {"ห้ามใช้", kConstraintCues},
    {"ไม่เกิน", kConstraintCues},
    {"ตอบเพียง", kConstraintCues},
    {"ตอบแค่", kConstraintCues},
    {"ให้กระชับ", kConstraintCues},
    {"โดยไม่ใช้", kConstraintCues},
    {"ลงท้ายด้วย", kConstraintCues},
    // Maths.
    {"สมการ", kMathTerms},
    {"คำนวณ", kMathTerms},
    {"อินทิกรัล", kMathTerms},
    {"หาอนุพันธ์", kMathTerms},
    {"ความน่าจะ", kMathTerms},
    {"เมทริกซ์", kMathTerms},
    {"พหุนาม", kMathTerms},
    {"ทฤษฎีบท", kMathTerms},
    {"จำนวนเฉพาะ", kMathTerms},
    {"จงหาค่า", kMathTerms},
    // Code.
    {"โค้ด", kCodeKeywords},
    {"ฟังก์ช", kCodeKeywords},
    {"เขียนโปรแกรม", kCodeKeywords},
    {"ไพทอน", kCodeKeywords},
    {"สคริปต์", kCodeKeywords},
    {"ตัวแปร", kCodeKeywords},
    {"คอมไพล์", kCodeKeywords},
    // Specialist vocabulary (medicine, law, physics).
    {"ผู้ป่วย", kDomainTerms},
    {"วินิจฉัย", kDomainTerms},
    {"รักษาโรค", kDomainTerms},
    {"ยาปฏิชีวนะ", kDomainTerms},
    {"มะเร็ง", kDomainTerms},
    {"เบาหวาน", kDomainTerms},
    {"ทางกฎหมาย", kDomainTerms},
    {"คำพิพากษา", kDomainTerms},
    {"จำเลย", kDomainTerms},
    {"ผิดสัญญา", kDomainTerms},
    {"ควอนตัม", kDomainTerms},
};
// clang-format on

constexpr size_t kCueCount = std::size(kCues);
constexpr size_t kLetterBytes = 3;  // every Thai letter: E0 B8 80..E0 B9 BF

// The filter of phrase starts: a phrase's first two letters select an entry whose bit n says
// a phrase of n letters may start so (false positives cost a lookup). Most positions of Thai
// text select an empty entry and cost one load.
constexpr size_t kStartKeys = 4096;
constexpr size_t start_key(uint32_t first, uint32_t second) {
  return (first * 131u + second) & (kStartKeys - 1);
}

constexpr size_t letters_of(std::string_view phrase) {
  return phrase.size() / kLetterBytes;
}

constexpr std::array<uint16_t, kStartKeys> kStarts = [] {
  std::array<uint16_t, kStartKeys> starts{};
  for (const ThaiCue& cue : kCues) {
    const size_t key = start_key(thai_offset(cue.phrase, 0), thai_offset(cue.phrase, kLetterBytes));
    starts[key] = static_cast<uint16_t>(starts[key] | 1u << letters_of(cue.phrase));
  }
  return starts;
}();

// The phrases by their FNV-1a hash: open addressing, slot -> 1 + index into kCues, 0 = empty.
constexpr size_t kSlotCount = 512;
constexpr std::array<uint16_t, kSlotCount> kSlots = [] {
  std::array<uint16_t, kSlotCount> slots{};
  for (size_t i = 0; i < kCueCount; ++i) {
    size_t slot = fnv1a(kCues[i].phrase) & (kSlotCount - 1);
    while (slots[slot] != 0) {
      slot = (slot + 1) & (kSlotCount - 1);
    }
    slots[slot] = static_cast<uint16_t>(i + 1);
  }
  return slots;
}();

// Thai letters only, 2 to kMaxThaiCueChars of them, each phrase once, a feature each.
constexpr bool cues_are_well_formed() {
  for (size_t i = 0; i < kCueCount; ++i) {
    const std::string_view phrase = kCues[i].phrase;
    if (phrase.size() % kLetterBytes != 0 || letters_of(phrase) < 2 ||
        letters_of(phrase) > kMaxThaiCueChars || kCues[i].cue >= kFeatureEnd) {
      return false;
    }
    for (size_t k = 0; k < phrase.size(); k += kLetterBytes) {
      const auto lead = static_cast<uint8_t>(phrase[k]);
      const auto second = static_cast<uint8_t>(phrase[k + 1]);
      const auto third = static_cast<uint8_t>(phrase[k + 2]);
      if (lead != 0xe0 || (second != 0xb8 && second != 0xb9) || (third & 0xc0) != 0x80 ||
          !is_thai_letter(0x0e00 + thai_offset(phrase, k))) {
        return false;
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (kCues[j].phrase == phrase) {
        return false;
      }
    }
  }
  return kCueCount * 2 < kSlotCount;
}
static_assert(cues_are_well_formed(), "Thai cues: Thai letters, 2 to 15 of them, each once");

const ThaiCue* find_phrase(std::string_view phrase) {
  for (size_t slot = fnv1a(phrase) & (kSlotCount - 1); kSlots[slot] != 0;
       slot = (slot + 1) & (kSlotCount - 1)) {
    const ThaiCue& cue = kCues[kSlots[slot] - 1u];
    if (cue.phrase == phrase) {
      return &cue;
    }
  }
  return nullptr;
}

}  // namespace

size_t find_thai_cues(std::string_view run, std::span<uint8_t> out) {
  const size_t letters = run.size() / kLetterBytes;
  size_t found = 0;
  for (size_t i = 0; i + 1 < letters && found < out.size();) {
    const size_t at = i * kLetterBytes;
    const uint16_t lengths =
        kStarts[start_key(thai_offset(run, at), thai_offset(run, at + kLetterBytes))];
    size_t matched = 0;
    for (size_t n = std::min(kMaxThaiCueChars, letters - i); lengths != 0 && n >= 2; --n) {
      if ((lengths >> n & 1u) == 0) {
        continue;
      }
      if (const ThaiCue* cue = find_phrase(run.substr(at, n * kLetterBytes))) {
        out[found++] = cue->cue;
        matched = n;
        break;
      }
    }
    i += matched != 0 ? matched : 1;
  }
  return found;
}

std::span<const ThaiCue> thai_cues() {
  return kCues;
}

}  // namespace tandem::routing::prompt_detail
