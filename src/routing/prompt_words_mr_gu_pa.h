#pragma once
// The task cues of Marathi, Gujarati and Punjabi (Gurmukhi) requests, as prompt_words_ar_hi_vi.h
// holds them for Hindi: the words that name the task in an instruction, counted toward the same
// features as their English counterparts, written from the seeds' decision framework and not
// fitted to any data.
//
// - A request is often a task noun and a general verb ("अनुवाद करा", "ਅਨੁਵਾਦ ਕਰੋ"), so the nouns
//   are listed, with the suffixes requests join to them, and the general verbs are not.
// - Marathi shares Devanagari with Hindi: a word the Hindi list has is listed there only, and
//   counts alike. Gurmukhi letters with a nukta are listed in both encodings.
//
// The Indic scripts have no case. Internal to prompt_vocabulary.cpp, which builds one table of
// every language's words.
//
// Thread-safety: immutable data built at compile time.

#include "routing/prompt_feature_ids.h"
#include "routing/prompt_vocabulary.h"

namespace tandem::routing::prompt_detail {

// clang-format off: one line per word reads as a lexicon
inline constexpr VocabularyEntry kMrGuPaWords[] = {
    // Marathi.
    // Devanagari, as Hindi. A request is a verb (polite -आ, familiar stem) or a task noun with
    // करा/कर: the noun is listed, not the general verb; nouns also with -चे/-ची (of), -सह (with),
    // -त (in). A word the Hindi list already has (अनुवाद, सारांश, विश्लेषण, तुलना, कविता...) counts
    // from there.
    {"भाषांतर", kEasyTaskCues, Tag::kNone},
    {"भाषांतरित", kEasyTaskCues, Tag::kNone},
    {"सारांशात", kEasyTaskCues, Tag::kNone},
    {"थोडक्यात", kEasyTaskCues, Tag::kNone},  // "briefly"
    {"गोषवारा", kEasyTaskCues, Tag::kNone},  // "summary"
    {"वर्गवारी", kEasyTaskCues, Tag::kNone},
    {"वर्गीकरणासह", kEasyTaskCues, Tag::kNone},
    {"यादी", kEasyTaskCues, Tag::kNone},
    {"यादीत", kEasyTaskCues, Tag::kNone},
    {"ओळखा", kEasyTaskCues, Tag::kNone},
    {"ओळखून", kEasyTaskCues, Tag::kNone},
    {"दुरुस्त", kEasyTaskCues, Tag::kNone},
    {"दुरुस्ती", kEasyTaskCues, Tag::kNone},
    {"सुधारा", kEasyTaskCues, Tag::kNone},
    {"शुद्धलेखन", kEasyTaskCues, Tag::kNone},  // "spelling"
    {"शुद्धलेखनाच्या", kEasyTaskCues, Tag::kNone},
    {"व्याकरणाच्या", kEasyTaskCues, Tag::kNone},
    {"समानार्थी", kEasyTaskCues, Tag::kNone},
    {"विरुद्धार्थी", kEasyTaskCues, Tag::kNone},
    {"रूपांतर", kEasyTaskCues, Tag::kNone},
    {"सारणी", kEasyTaskCues, Tag::kNone},
    {"तक्ता", kEasyTaskCues, Tag::kNone},
    {"तक्त्यात", kEasyTaskCues, Tag::kNone},
    {"सकारात्मक", kEasyTaskCues, Tag::kNone},
    {"नकारात्मक", kEasyTaskCues, Tag::kNone},
    {"पुन्हा लिहा", kEasyTaskCues, Tag::kNone},  // "rewrite"
    {"खरे", kYesNoCues, Tag::kNone},
    {"खोटे", kYesNoCues, Tag::kNone},
    {"खरं", kYesNoCues, Tag::kNone},
    {"खोटं", kYesNoCues, Tag::kNone},
    {"चूक", kYesNoCues, Tag::kNone},
    {"की नाही", kYesNoCues, Tag::kNone},  // "whether or not"
    {"कोण", kFactoidCues, Tag::kNone},
    {"कधी", kFactoidCues, Tag::kNone},
    {"कुठे", kFactoidCues, Tag::kNone},
    {"कोठे", kFactoidCues, Tag::kNone},
    {"कोणता", kFactoidCues, Tag::kNone},
    {"कोणती", kFactoidCues, Tag::kNone},
    {"कोणते", kFactoidCues, Tag::kNone},
    {"कोणी", kFactoidCues, Tag::kNone},
    {"काय", kFactoidCues, Tag::kNone},
    {"सिद्धता", kHardTaskCues, Tag::kNone},  // "proof"
    {"पुरावा", kHardTaskCues, Tag::kNone},
    {"आराखडा", kHardTaskCues, Tag::kNone},  // "design, draft"
    {"डिझाइन", kHardTaskCues, Tag::kNone},
    {"डिझाईन", kHardTaskCues, Tag::kNone},
    {"विश्लेषणासह", kHardTaskCues, Tag::kNone},
    {"विश्लेषणात्मक", kHardTaskCues, Tag::kNone},
    {"मूल्यमापन", kHardTaskCues, Tag::kNone},
    {"ऑप्टिमाइझ", kHardTaskCues, Tag::kNone},
    {"अंमलबजावणी", kHardTaskCues, Tag::kNone},  // "implementation"
    {"रणनीती", kHardTaskCues, Tag::kNone},
    {"धोरण", kHardTaskCues, Tag::kNone},
    {"नियोजन", kHardTaskCues, Tag::kNone},
    {"जोखीम", kHardTaskCues, Tag::kNone},
    {"धोके", kHardTaskCues, Tag::kNone},
    {"अल्गोरिदम", kHardTaskCues, Tag::kNone},
    {"अल्गोरिथम", kHardTaskCues, Tag::kNone},
    {"डीबग", kHardTaskCues, Tag::kNone},
    {"पुनरावलोकन", kHardTaskCues, Tag::kNone},
    {"टीका", kHardTaskCues, Tag::kNone},  // "critique"
    {"परीक्षण", kHardTaskCues, Tag::kNone},
    {"संशोधन", kHardTaskCues, Tag::kNone},
    {"साधकबाधक", kHardTaskCues, Tag::kNone},  // "pros and cons"
    {"समजावून", kReasoningCues, Tag::kNone},   // "समजावून सांगा"
    {"समजावा", kReasoningCues, Tag::kNone},
    {"समजाव", kReasoningCues, Tag::kNone},
    {"स्पष्ट करा", kReasoningCues, Tag::kNone},  // "explain"; स्पष्ट alone is "clear"
    {"कारणे", kReasoningCues, Tag::kNone},
    {"कारणांसह", kReasoningCues, Tag::kNone},
    {"तर्कशुद्ध", kReasoningCues, Tag::kNone},
    {"गृहीतक", kReasoningCues, Tag::kNone},
    {"अनुमान", kReasoningCues, Tag::kNone},
    {"टप्प्याटप्प्याने", kReasoningCues, Tag::kNone},  // "step by step"
    {"सविस्तर", kReasoningCues, Tag::kNone},
    {"विवेचन", kReasoningCues, Tag::kNone},
    {"लिहा", kCreativeCues, Tag::kNone},
    {"लिही", kCreativeCues, Tag::kNone},
    {"लिहून", kCreativeCues, Tag::kNone},  // before द्या ("लिहून द्या")
    {"लिहावे", kCreativeCues, Tag::kNone},
    {"कथा", kCreativeCues, Tag::kNone},
    {"कथेचे", kCreativeCues, Tag::kNone},
    {"कवितेचे", kCreativeCues, Tag::kNone},
    {"गाणे", kCreativeCues, Tag::kNone},
    {"कादंबरी", kCreativeCues, Tag::kNone},
    {"विनोद", kCreativeCues, Tag::kNone},
    {"घोषवाक्य", kCreativeCues, Tag::kNone},  // "slogan"
    {"चारोळी", kCreativeCues, Tag::kNone},
    {"लेख", kCreativeCues, Tag::kNone},
    {"कल्पनारम्य", kCreativeCues, Tag::kNone},
    {"फक्त", kConstraintCues, Tag::kNone},
    {"केवळ", kConstraintCues, Tag::kNone},
    {"कमाल", kConstraintCues, Tag::kNone},  // "at most" ("कमाल 100 शब्द")
    {"किमान", kConstraintCues, Tag::kNone},
    {"जास्तीत जास्त", kConstraintCues, Tag::kNone},
    {"कमीत कमी", kConstraintCues, Tag::kNone},
    {"आवश्यक", kConstraintCues, Tag::kNone},
    {"अनिवार्य", kConstraintCues, Tag::kNone},
    {"शिवाय", kConstraintCues, Tag::kNone},
    {"वगळून", kConstraintCues, Tag::kNone},
    {"टाळा", kConstraintCues, Tag::kNone},
    {"नेमके", kConstraintCues, Tag::kNone},
    {"सोडवा", kMathTerms, Tag::kNone},  // "solve"
    {"सोडव", kMathTerms, Tag::kNone},
    {"आकडेमोड", kMathTerms, Tag::kNone},
    {"किती", kMathTerms, Tag::kNone},
    {"सरासरी", kMathTerms, Tag::kNone},
    {"टक्केवारी", kMathTerms, Tag::kNone},
    {"टक्के", kMathTerms, Tag::kNone},
    {"क्षेत्रफळ", kMathTerms, Tag::kNone},
    {"संभाव्यता", kMathTerms, Tag::kNone},
    {"समीकरणे", kMathTerms, Tag::kNone},
    {"समीकरणाचे", kMathTerms, Tag::kNone},
    {"अवकलन", kMathTerms, Tag::kNone},
    {"कोडमध्ये", kCodeKeywords, Tag::kNone},
    {"कोडचे", kCodeKeywords, Tag::kNone},
    {"प्रोग्रॅम", kCodeKeywords, Tag::kNone},
    {"प्रोग्रॅमिंग", kCodeKeywords, Tag::kNone},
    {"स्क्रिप्ट", kCodeKeywords, Tag::kNone},
    {"रुग्ण", kDomainTerms, Tag::kNone},
    {"रुग्णाला", kDomainTerms, Tag::kNone},
    {"रुग्णाचे", kDomainTerms, Tag::kNone},
    {"लक्षणे", kDomainTerms, Tag::kNone},
    {"करार", kDomainTerms, Tag::kNone},
    {"कायदेशीर", kDomainTerms, Tag::kNone},
    {"महागाई", kDomainTerms, Tag::kNone},
    {"औषध", kDomainTerms, Tag::kNone},
    {"औषधोपचार", kDomainTerms, Tag::kNone},
    // Gujarati.
    // A request is a verb (polite -ો, the form before આપો: "લખી આપો") or a task noun with કરો: the
    // noun is listed, not કરો/કર/આપો; main nouns also with -નું (of), -માં (in), -સાથે (with).
    {"અનુવાદ", kEasyTaskCues, Tag::kNone},
    {"અનુવાદિત", kEasyTaskCues, Tag::kNone},
    {"ભાષાંતર", kEasyTaskCues, Tag::kNone},
    {"ટ્રાન્સલેટ", kEasyTaskCues, Tag::kNone},
    {"સારાંશ", kEasyTaskCues, Tag::kNone},
    {"સારાંશમાં", kEasyTaskCues, Tag::kNone},
    {"ટૂંકમાં", kEasyTaskCues, Tag::kNone},  // "in short"
    {"સંક્ષેપમાં", kEasyTaskCues, Tag::kNone},
    {"સંક્ષિપ્ત", kEasyTaskCues, Tag::kNone},
    {"વર્ગીકરણ", kEasyTaskCues, Tag::kNone},
    {"વર્ગીકૃત", kEasyTaskCues, Tag::kNone},
    {"યાદી", kEasyTaskCues, Tag::kNone},
    {"યાદીમાં", kEasyTaskCues, Tag::kNone},
    {"સૂચિ", kEasyTaskCues, Tag::kNone},
    {"ઓળખો", kEasyTaskCues, Tag::kNone},
    {"ઓળખી", kEasyTaskCues, Tag::kNone},
    {"સુધારો", kEasyTaskCues, Tag::kNone},
    {"સુધારી", kEasyTaskCues, Tag::kNone},
    {"જોડણી", kEasyTaskCues, Tag::kNone},  // "spelling"
    {"વ્યાકરણ", kEasyTaskCues, Tag::kNone},
    {"સમાનાર્થી", kEasyTaskCues, Tag::kNone},
    {"વિરુદ્ધાર્થી", kEasyTaskCues, Tag::kNone},
    {"વ્યાખ્યા", kEasyTaskCues, Tag::kNone},  // "definition"
    {"વ્યાખ્યાયિત", kEasyTaskCues, Tag::kNone},
    {"રૂપાંતર", kEasyTaskCues, Tag::kNone},
    {"રૂપાંતરિત", kEasyTaskCues, Tag::kNone},
    {"કોષ્ટક", kEasyTaskCues, Tag::kNone},
    {"કોષ્ટકમાં", kEasyTaskCues, Tag::kNone},
    {"ગોઠવો", kEasyTaskCues, Tag::kNone},
    {"સકારાત્મક", kEasyTaskCues, Tag::kNone},
    {"નકારાત્મક", kEasyTaskCues, Tag::kNone},
    {"ફરીથી લખો", kEasyTaskCues, Tag::kNone},  // "rewrite"
    {"સાચું", kYesNoCues, Tag::kNone},
    {"ખોટું", kYesNoCues, Tag::kNone},
    {"સાચુ", kYesNoCues, Tag::kNone},
    {"કે નહીં", kYesNoCues, Tag::kNone},  // "whether or not"
    {"કોણ", kFactoidCues, Tag::kNone},
    {"ક્યારે", kFactoidCues, Tag::kNone},
    {"ક્યાં", kFactoidCues, Tag::kNone},
    {"કયું", kFactoidCues, Tag::kNone},
    {"કયો", kFactoidCues, Tag::kNone},
    {"કઈ", kFactoidCues, Tag::kNone},
    {"કોણે", kFactoidCues, Tag::kNone},
    {"શું", kFactoidCues, Tag::kNone},
    {"રાજધાની", kFactoidCues, Tag::kNone},
    {"સાબિત", kHardTaskCues, Tag::kNone},  // "સાબિત કરો", prove
    {"સાબિતી", kHardTaskCues, Tag::kNone},
    {"પુરાવાસાથે", kHardTaskCues, Tag::kNone},
    {"ડિઝાઇન", kHardTaskCues, Tag::kNone},
    {"ડિઝાઈન", kHardTaskCues, Tag::kNone},
    {"રૂપરેખા", kHardTaskCues, Tag::kNone},
    {"આર્કિટેક્ચર", kHardTaskCues, Tag::kNone},
    {"વિશ્લેષણ", kHardTaskCues, Tag::kNone},
    {"વિશ્લેષણાત્મક", kHardTaskCues, Tag::kNone},
    {"મૂલ્યાંકન", kHardTaskCues, Tag::kNone},
    {"તુલના", kHardTaskCues, Tag::kNone},
    {"સરખામણી", kHardTaskCues, Tag::kNone},  // "comparison"
    {"તુલનાત્મક", kHardTaskCues, Tag::kNone},
    {"ઑપ્ટિમાઇઝ", kHardTaskCues, Tag::kNone},
    {"ઓપ્ટિમાઇઝ", kHardTaskCues, Tag::kNone},
    {"અમલીકરણ", kHardTaskCues, Tag::kNone},  // "implementation"
    {"વ્યૂહરચના", kHardTaskCues, Tag::kNone},
    {"યોજના", kHardTaskCues, Tag::kNone},
    {"આયોજન", kHardTaskCues, Tag::kNone},
    {"જોખમો", kHardTaskCues, Tag::kNone},
    {"અલ્ગોરિધમ", kHardTaskCues, Tag::kNone},
    {"એલ્ગોરિધમ", kHardTaskCues, Tag::kNone},
    {"ડિબગ", kHardTaskCues, Tag::kNone},
    {"સમીક્ષા", kHardTaskCues, Tag::kNone},
    {"વિવેચન", kHardTaskCues, Tag::kNone},
    {"સંશોધન", kHardTaskCues, Tag::kNone},
    {"ચર્ચા", kHardTaskCues, Tag::kNone},
    {"ગુણદોષ", kHardTaskCues, Tag::kNone},  // "pros and cons"
    {"ગેરફાયદા", kHardTaskCues, Tag::kNone},
    {"તારવો", kHardTaskCues, Tag::kNone},  // "derive"
    {"સમજાવો", kReasoningCues, Tag::kNone},
    {"સમજાવ", kReasoningCues, Tag::kNone},
    {"સમજાવી", kReasoningCues, Tag::kNone},  // before આપો
    {"સમજૂતી", kReasoningCues, Tag::kNone},
    {"સમજૂતીસાથે", kReasoningCues, Tag::kNone},
    {"સ્પષ્ટતા", kReasoningCues, Tag::kNone},
    {"શા માટે", kReasoningCues, Tag::kNone},  // "why"
    {"કેમ", kReasoningCues, Tag::kNone},
    {"કારણો", kReasoningCues, Tag::kNone},
    {"તર્ક", kReasoningCues, Tag::kNone},
    {"તાર્કિક", kReasoningCues, Tag::kNone},
    {"ધારણા", kReasoningCues, Tag::kNone},
    {"અનુમાન", kReasoningCues, Tag::kNone},
    {"નિષ્કર્ષ", kReasoningCues, Tag::kNone},
    {"તબક્કાવાર", kReasoningCues, Tag::kNone},  // "step by step"
    {"વિગતવાર", kReasoningCues, Tag::kNone},
    {"ક્રમશઃ", kReasoningCues, Tag::kNone},
    {"લખો", kCreativeCues, Tag::kNone},
    {"લખ", kCreativeCues, Tag::kNone},
    {"લખી", kCreativeCues, Tag::kNone},  // before આપો ("લખી આપો")
    {"વાર્તા", kCreativeCues, Tag::kNone},
    {"વાર્તાનો", kCreativeCues, Tag::kNone},
    {"કવિતા", kCreativeCues, Tag::kNone},
    {"કવિતાનું", kCreativeCues, Tag::kNone},
    {"ગીત", kCreativeCues, Tag::kNone},
    {"નિબંધ", kCreativeCues, Tag::kNone},
    {"નવલકથા", kCreativeCues, Tag::kNone},
    {"સંવાદ", kCreativeCues, Tag::kNone},
    {"પટકથા", kCreativeCues, Tag::kNone},
    {"કાલ્પનિક", kCreativeCues, Tag::kNone},
    {"કલ્પના", kCreativeCues, Tag::kNone},
    {"ટુચકો", kCreativeCues, Tag::kNone},  // "joke"
    {"સ્લોગન", kCreativeCues, Tag::kNone},
    {"લેખ", kCreativeCues, Tag::kNone},
    {"ફક્ત", kConstraintCues, Tag::kNone},
    {"માત્ર", kConstraintCues, Tag::kNone},
    {"ઓછામાં", kConstraintCues, Tag::kNone},    // "ઓછામાં ઓછા", at least
    {"વધુમાં વધુ", kConstraintCues, Tag::kNone},  // "at most"; વધુમાં alone is "moreover"
    {"મહત્તમ", kConstraintCues, Tag::kNone},
    {"ન્યૂનતમ", kConstraintCues, Tag::kNone},
    {"અવશ્ય", kConstraintCues, Tag::kNone},
    {"ફરજિયાત", kConstraintCues, Tag::kNone},
    {"વગર", kConstraintCues, Tag::kNone},
    {"વિના", kConstraintCues, Tag::kNone},
    {"ટાળો", kConstraintCues, Tag::kNone},
    {"સમીકરણ", kMathTerms, Tag::kNone},
    {"સમીકરણનું", kMathTerms, Tag::kNone},
    {"ગણતરી", kMathTerms, Tag::kNone},
    {"ગણો", kMathTerms, Tag::kNone},
    {"ઉકેલો", kMathTerms, Tag::kNone},  // "solve"
    {"ઉકેલ", kMathTerms, Tag::kNone},
    {"ટકા", kMathTerms, Tag::kNone},
    {"ટકાવારી", kMathTerms, Tag::kNone},
    {"સરેરાશ", kMathTerms, Tag::kNone},
    {"ક્ષેત્રફળ", kMathTerms, Tag::kNone},
    {"કેટલા", kMathTerms, Tag::kNone},
    {"કેટલું", kMathTerms, Tag::kNone},
    {"કેટલી", kMathTerms, Tag::kNone},
    {"પ્રમેય", kMathTerms, Tag::kNone},
    {"કોડ", kCodeKeywords, Tag::kNone},
    {"કોડનું", kCodeKeywords, Tag::kNone},
    {"ફંક્શન", kCodeKeywords, Tag::kNone},
    {"પ્રોગ્રામ", kCodeKeywords, Tag::kNone},
    {"પ્રોગ્રામિંગ", kCodeKeywords, Tag::kNone},
    {"સ્ક્રિપ્ટ", kCodeKeywords, Tag::kNone},
    {"દર્દી", kDomainTerms, Tag::kNone},
    {"દર્દીને", kDomainTerms, Tag::kNone},
    {"નિદાન", kDomainTerms, Tag::kNone},
    {"સારવાર", kDomainTerms, Tag::kNone},
    {"લક્ષણો", kDomainTerms, Tag::kNone},
    {"કરાર", kDomainTerms, Tag::kNone},
    {"કાનૂની", kDomainTerms, Tag::kNone},
    {"અદાલત", kDomainTerms, Tag::kNone},
    {"મોંઘવારી", kDomainTerms, Tag::kNone},
    {"ફુગાવો", kDomainTerms, Tag::kNone},
    {"ડોઝ", kDomainTerms, Tag::kNone},
    // Punjabi.
    // Gurmukhi. A request is a verb (polite -ੋ/-ਓ, familiar stem, -ਿਓ) or a task noun with ਕਰੋ: the
    // noun is listed, not ਕਰੋ/ਕਰ/ਦਿਓ; plural forms (-ਆਂ, -ਵਾਂ) of the main nouns. A word with ਸ਼ ਖ਼
    // ਗ਼ ਜ਼ ਫ਼ ਲ਼ is listed twice: precomposed (U+0A33, U+0A36, U+0A59..U+0A5B, U+0A5E) and letter
    // + nukta (U+0A3C). ੜ (U+0A5C) is a letter of its own, with no nukta form.
    {"ਅਨੁਵਾਦ", kEasyTaskCues, Tag::kNone},
    {"ਤਰਜਮਾ", kEasyTaskCues, Tag::kNone},
    {"ਟ੍ਰਾਂਸਲੇਟ", kEasyTaskCues, Tag::kNone},
    {"ਸਾਰਾਂਸ਼", kEasyTaskCues, Tag::kNone},  // precomposed nukta letter
    {"ਸਾਰਾਂਸ਼", kEasyTaskCues, Tag::kNone},  // letter + nukta
    {"ਸੰਖੇਪ", kEasyTaskCues, Tag::kNone},
    {"ਵਰਗੀਕਰਨ", kEasyTaskCues, Tag::kNone},
    {"ਸੂਚੀ", kEasyTaskCues, Tag::kNone},
    {"ਸੂਚੀਬੱਧ", kEasyTaskCues, Tag::kNone},
    {"ਲਿਸਟ", kEasyTaskCues, Tag::kNone},
    {"ਕੱਢੋ", kEasyTaskCues, Tag::kNone},  // "extract"
    {"ਪਛਾਣੋ", kEasyTaskCues, Tag::kNone},
    {"ਸੁਧਾਰੋ", kEasyTaskCues, Tag::kNone},
    {"ਦਰੁਸਤ", kEasyTaskCues, Tag::kNone},
    {"ਸ਼ਬਦਜੋੜ", kEasyTaskCues, Tag::kNone},  // "spelling"; precomposed nukta letter
    {"ਸ਼ਬਦਜੋੜ", kEasyTaskCues, Tag::kNone},  // "spelling"; letter + nukta
    {"ਵਿਆਕਰਨ", kEasyTaskCues, Tag::kNone},
    {"ਸਮਾਨਾਰਥੀ", kEasyTaskCues, Tag::kNone},
    {"ਪਰਿਭਾਸ਼ਾ", kEasyTaskCues, Tag::kNone},  // precomposed nukta letter
    {"ਪਰਿਭਾਸ਼ਾ", kEasyTaskCues, Tag::kNone},  // letter + nukta
    {"ਬਦਲੋ", kEasyTaskCues, Tag::kNone},      // "convert"
    {"ਰੂਪਾਂਤਰ", kEasyTaskCues, Tag::kNone},
    {"ਸਾਰਣੀ", kEasyTaskCues, Tag::kNone},
    {"ਕ੍ਰਮਬੱਧ", kEasyTaskCues, Tag::kNone},
    {"ਸਕਾਰਾਤਮਕ", kEasyTaskCues, Tag::kNone},
    {"ਨਕਾਰਾਤਮਕ", kEasyTaskCues, Tag::kNone},
    {"ਦੁਬਾਰਾ ਲਿਖੋ", kEasyTaskCues, Tag::kNone},  // "rewrite"
    {"ਸੱਚ", kYesNoCues, Tag::kNone},
    {"ਝੂਠ", kYesNoCues, Tag::kNone},
    {"ਗਲਤ", kYesNoCues, Tag::kNone},
    {"ਗ਼ਲਤ", kYesNoCues, Tag::kNone},     // precomposed nukta letter
    {"ਗ਼ਲਤ", kYesNoCues, Tag::kNone},     // letter + nukta
    {"ਸਹੀ ਜਾਂ", kYesNoCues, Tag::kNone},  // "ਸਹੀ ਜਾਂ ਗਲਤ", true or false
    {"ਜਾਂ ਨਹੀਂ", kYesNoCues, Tag::kNone},  // "or not"
    {"ਕੌਣ", kFactoidCues, Tag::kNone},
    {"ਕਦੋਂ", kFactoidCues, Tag::kNone},
    {"ਕਿੱਥੇ", kFactoidCues, Tag::kNone},
    {"ਕਿਹੜਾ", kFactoidCues, Tag::kNone},
    {"ਕਿਹੜੀ", kFactoidCues, Tag::kNone},
    {"ਕਿਹੜੇ", kFactoidCues, Tag::kNone},
    {"ਕਿਸ ਨੇ", kFactoidCues, Tag::kNone},
    {"ਰਾਜਧਾਨੀ", kFactoidCues, Tag::kNone},
    {"ਸਾਬਤ", kHardTaskCues, Tag::kNone},  // "ਸਾਬਤ ਕਰੋ", prove
    {"ਸਿੱਧ", kHardTaskCues, Tag::kNone},
    {"ਸਬੂਤ", kHardTaskCues, Tag::kNone},
    {"ਡਿਜ਼ਾਈਨ", kHardTaskCues, Tag::kNone},  // precomposed nukta letter
    {"ਡਿਜ਼ਾਈਨ", kHardTaskCues, Tag::kNone},  // letter + nukta
    {"ਡਿਜਾਈਨ", kHardTaskCues, Tag::kNone},
    {"ਰੂਪਰੇਖਾ", kHardTaskCues, Tag::kNone},
    {"ਆਰਕੀਟੈਕਚਰ", kHardTaskCues, Tag::kNone},
    {"ਵਿਸ਼ਲੇਸ਼ਣ", kHardTaskCues, Tag::kNone},  // precomposed nukta letter
    {"ਵਿਸ਼ਲੇਸ਼ਣ", kHardTaskCues, Tag::kNone},  // letter + nukta
    {"ਮੁਲਾਂਕਣ", kHardTaskCues, Tag::kNone},
    {"ਤੁਲਨਾ", kHardTaskCues, Tag::kNone},
    {"ਤੁਲਨਾਤਮਕ", kHardTaskCues, Tag::kNone},
    {"ਓਪਟੀਮਾਈਜ਼", kHardTaskCues, Tag::kNone},  // precomposed nukta letter
    {"ਓਪਟੀਮਾਈਜ਼", kHardTaskCues, Tag::kNone},  // letter + nukta
    {"ਲਾਗੂ", kHardTaskCues, Tag::kNone},       // "ਲਾਗੂ ਕਰੋ", implement
    {"ਰਣਨੀਤੀ", kHardTaskCues, Tag::kNone},
    {"ਯੋਜਨਾ", kHardTaskCues, Tag::kNone},
    {"ਵਿਉਂਤਬੰਦੀ", kHardTaskCues, Tag::kNone},  // "planning"
    {"ਜੋਖਮ", kHardTaskCues, Tag::kNone},
    {"ਐਲਗੋਰਿਦਮ", kHardTaskCues, Tag::kNone},
    {"ਐਲਗੋਰਿਥਮ", kHardTaskCues, Tag::kNone},
    {"ਡੀਬੱਗ", kHardTaskCues, Tag::kNone},
    {"ਸਮੀਖਿਆ", kHardTaskCues, Tag::kNone},
    {"ਆਲੋਚਨਾ", kHardTaskCues, Tag::kNone},
    {"ਚਰਚਾ", kHardTaskCues, Tag::kNone},
    {"ਸਮਝਾਓ", kReasoningCues, Tag::kNone},
    {"ਸਮਝਾਉ", kReasoningCues, Tag::kNone},
    {"ਸਮਝਾਇਓ", kReasoningCues, Tag::kNone},
    {"ਵਿਆਖਿਆ", kReasoningCues, Tag::kNone},
    {"ਸਪੱਸ਼ਟੀਕਰਨ", kReasoningCues, Tag::kNone},  // precomposed nukta letter
    {"ਸਪੱਸ਼ਟੀਕਰਨ", kReasoningCues, Tag::kNone},  // letter + nukta
    {"ਕਿਉਂ", kReasoningCues, Tag::kNone},
    {"ਕਾਰਨਾਂ", kReasoningCues, Tag::kNone},
    {"ਤਰਕ", kReasoningCues, Tag::kNone},
    {"ਤਰਕਸ਼ੀਲ", kReasoningCues, Tag::kNone},  // precomposed nukta letter
    {"ਤਰਕਸ਼ੀਲ", kReasoningCues, Tag::kNone},  // letter + nukta
    {"ਧਾਰਨਾ", kReasoningCues, Tag::kNone},
    {"ਅਨੁਮਾਨ", kReasoningCues, Tag::kNone},
    {"ਸਿੱਟਾ", kReasoningCues, Tag::kNone},    // "conclusion"
    {"ਕਦਮ ਦਰ", kReasoningCues, Tag::kNone},  // "ਕਦਮ ਦਰ ਕਦਮ", step by step
    {"ਵਿਸਥਾਰਪੂਰਵਕ", kReasoningCues, Tag::kNone},
    {"ਲਿਖੋ", kCreativeCues, Tag::kNone},
    {"ਲਿਖ", kCreativeCues, Tag::kNone},
    {"ਲਿਖਿਓ", kCreativeCues, Tag::kNone},
    {"ਬਣਾਓ", kCreativeCues, Tag::kNone},
    {"ਕਹਾਣੀ", kCreativeCues, Tag::kNone},
    {"ਕਹਾਣੀਆਂ", kCreativeCues, Tag::kNone},
    {"ਕਵਿਤਾ", kCreativeCues, Tag::kNone},
    {"ਕਵਿਤਾਵਾਂ", kCreativeCues, Tag::kNone},
    {"ਗੀਤ", kCreativeCues, Tag::kNone},
    {"ਲੇਖ", kCreativeCues, Tag::kNone},
    {"ਨਿਬੰਧ", kCreativeCues, Tag::kNone},
    {"ਨਾਵਲ", kCreativeCues, Tag::kNone},
    {"ਸੰਵਾਦ", kCreativeCues, Tag::kNone},
    {"ਵਾਰਤਾਲਾਪ", kCreativeCues, Tag::kNone},
    {"ਪਟਕਥਾ", kCreativeCues, Tag::kNone},
    {"ਕਾਲਪਨਿਕ", kCreativeCues, Tag::kNone},
    {"ਕਲਪਨਾ", kCreativeCues, Tag::kNone},
    {"ਚੁਟਕਲਾ", kCreativeCues, Tag::kNone},
    {"ਨਾਅਰਾ", kCreativeCues, Tag::kNone},   // "slogan"
    {"ਸ਼ਾਇਰੀ", kCreativeCues, Tag::kNone},   // precomposed nukta letter
    {"ਸ਼ਾਇਰੀ", kCreativeCues, Tag::kNone},   // letter + nukta
    {"ਸਿਰਫ਼", kConstraintCues, Tag::kNone},  // precomposed nukta letter
    {"ਸਿਰਫ਼", kConstraintCues, Tag::kNone},  // letter + nukta
    {"ਸਿਰਫ", kConstraintCues, Tag::kNone},
    {"ਕੇਵਲ", kConstraintCues, Tag::kNone},
    {"ਘੱਟੋ", kConstraintCues, Tag::kNone},  // "ਘੱਟੋ-ਘੱਟ" (split at the hyphen), at least
    {"ਵੱਧ ਤੋਂ", kConstraintCues, Tag::kNone},  // "ਵੱਧ ਤੋਂ ਵੱਧ", at most
    {"ਅਧਿਕਤਮ", kConstraintCues, Tag::kNone},
    {"ਬਿਨਾਂ", kConstraintCues, Tag::kNone},
    {"ਬਗੈਰ", kConstraintCues, Tag::kNone},
    {"ਬਗ਼ੈਰ", kConstraintCues, Tag::kNone},    // precomposed nukta letter
    {"ਬਗ਼ੈਰ", kConstraintCues, Tag::kNone},    // letter + nukta
    {"ਜ਼ਰੂਰ", kConstraintCues, Tag::kNone},    // precomposed nukta letter
    {"ਜ਼ਰੂਰ", kConstraintCues, Tag::kNone},    // letter + nukta
    {"ਲਾਜ਼ਮੀ", kConstraintCues, Tag::kNone},  // precomposed nukta letter
    {"ਲਾਜ਼ਮੀ", kConstraintCues, Tag::kNone},  // letter + nukta
    {"ਸਮੀਕਰਨ", kMathTerms, Tag::kNone},
    {"ਗਣਨਾ", kMathTerms, Tag::kNone},
    {"ਹੱਲ", kMathTerms, Tag::kNone},
    {"ਗਿਣੋ", kMathTerms, Tag::kNone},
    {"ਪ੍ਰਤੀਸ਼ਤ", kMathTerms, Tag::kNone},  // precomposed nukta letter
    {"ਪ੍ਰਤੀਸ਼ਤ", kMathTerms, Tag::kNone},  // letter + nukta
    {"ਔਸਤ", kMathTerms, Tag::kNone},
    {"ਖੇਤਰਫਲ", kMathTerms, Tag::kNone},
    {"ਕਿੰਨੇ", kMathTerms, Tag::kNone},
    {"ਕਿੰਨਾ", kMathTerms, Tag::kNone},
    {"ਕਿੰਨੀ", kMathTerms, Tag::kNone},
    {"ਪ੍ਰਮੇਯ", kMathTerms, Tag::kNone},
    {"ਫ਼ਾਰਮੂਲਾ", kMathTerms, Tag::kNone},  // precomposed nukta letter
    {"ਫ਼ਾਰਮੂਲਾ", kMathTerms, Tag::kNone},  // letter + nukta
    {"ਫਾਰਮੂਲਾ", kMathTerms, Tag::kNone},
    {"ਕੋਡ", kCodeKeywords, Tag::kNone},
    {"ਫੰਕਸ਼ਨ", kCodeKeywords, Tag::kNone},  // precomposed nukta letter
    {"ਫੰਕਸ਼ਨ", kCodeKeywords, Tag::kNone},  // letter + nukta
    {"ਫ਼ੰਕਸ਼ਨ", kCodeKeywords, Tag::kNone},  // precomposed nukta letter
    {"ਫ਼ੰਕਸ਼ਨ", kCodeKeywords, Tag::kNone},  // letter + nukta
    {"ਪ੍ਰੋਗਰਾਮ", kCodeKeywords, Tag::kNone},
    {"ਪ੍ਰੋਗਰਾਮਿੰਗ", kCodeKeywords, Tag::kNone},
    {"ਸਕ੍ਰਿਪਟ", kCodeKeywords, Tag::kNone},
    {"ਮਰੀਜ਼", kDomainTerms, Tag::kNone},  // precomposed nukta letter
    {"ਮਰੀਜ਼", kDomainTerms, Tag::kNone},  // letter + nukta
    {"ਮਰੀਜ", kDomainTerms, Tag::kNone},
    {"ਨਿਦਾਨ", kDomainTerms, Tag::kNone},
    {"ਇਲਾਜ", kDomainTerms, Tag::kNone},
    {"ਲੱਛਣ", kDomainTerms, Tag::kNone},
    {"ਇਕਰਾਰਨਾਮਾ", kDomainTerms, Tag::kNone},  // "contract"
    {"ਕਾਨੂੰਨੀ", kDomainTerms, Tag::kNone},
    {"ਅਦਾਲਤ", kDomainTerms, Tag::kNone},
    {"ਮਹਿੰਗਾਈ", kDomainTerms, Tag::kNone},
    {"ਟੈਕਸ", kDomainTerms, Tag::kNone},
};
// clang-format on

}  // namespace tandem::routing::prompt_detail
