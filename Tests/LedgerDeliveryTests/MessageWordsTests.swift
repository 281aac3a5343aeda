import Foundation
import Testing

@testable import LedgerDelivery

@Suite("The service's own words in ka, en and ru")
struct MessageWordsTests {
    @Test("durations take each language's noun form: Russian's one, few and many (11–14 many); Georgian's singular")
    func durations() {
        let (en, ka, ru) = (MessageWords(locale: "en"), MessageWords(locale: "ka-GE"), MessageWords(locale: "ru"))
        #expect(en.duration(300) == "5 minutes" && en.duration(60) == "1 minute" && en.duration(604_800) == "7 days")
        #expect(ka.duration(300) == "5 წუთი" && ka.duration(3600) == "1 საათი" && ka.duration(604_800) == "7 დღე")
        #expect(ru.duration(60) == "1 минуту" && ru.duration(180) == "3 минуты" && ru.duration(300) == "5 минут")
        #expect(ru.duration(660) == "11 минут" && ru.duration(1260) == "21 минуту" && ru.duration(1320) == "22 минуты")
        #expect(ru.duration(86_400) == "1 день" && ru.duration(604_800) == "7 дней" && ru.duration(7200) == "2 часа")
        #expect(ru.duration(90) == "90 секунд" && MessageWords(locale: "fr").duration(90) == "90 seconds")
    }

    @Test("times and methods in the message's language; an unknown method as it is")
    func timesAndMethods() {
        let stamp = "2026-05-12T14:03:00Z"
        #expect(MessageWords(locale: "en").time(stamp) == "12 May 2026, 14:03 UTC")
        #expect(MessageWords(locale: "ka").time(stamp) == "12 მაისი 2026, 14:03 UTC")
        #expect(MessageWords(locale: "ru").time(stamp) == "12 мая 2026, 14:03 UTC")
        #expect(MessageWords(locale: "ru").method("phone") == "номер телефона" && MessageWords(locale: "ka").method("x") == "x")
        #expect(MessageWords(locale: "ka").secureAccount.contains("პაროლი"))
    }
}
