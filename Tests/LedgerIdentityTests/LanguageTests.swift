import Foundation
import LedgerIdentity
import Testing

@Suite("Languages: ka, en, ru")
struct LanguageTests {
    let base = DecideTests()

    @Test("a tag's language, when the service writes it; the first such tag of several, as written")
    func tags() {
        #expect(Language(tag: "ka-GE") == .ka && Language(tag: "RU") == .ru && Language(tag: "en") == .en)
        #expect(Language(tag: "kab") == nil && Language(tag: "fr-FR") == nil && Language(tag: nil) == nil)
        #expect(Language.firstSupported([nil, "de", "ka-GE", "ru"]) == "ka-GE")
        #expect(Language.firstSupported(["de", nil]) == nil)
    }

    @Test("the profile's language: chosen once, cleared with null, refused unless ka, en or ru; before the sign-ins'")
    func chosen() throws {
        var state = try base.registered()
        state.locale = "en-GB"
        let chosen = try decide(state, .updateProfile(displayName: nil, handle: nil, locale: "ru"), now: base.now)
        #expect(chosen == [.localeChosen(.init(locale: "ru"))])
        state = base.apply(state, chosen)
        #expect(state.messageLocale == "ru")
        #expect(try decide(state, .updateProfile(displayName: nil, handle: nil, locale: "ru"), now: base.now).isEmpty)
        #expect(throws: IdentityError.self) {
            try decide(state, .updateProfile(displayName: nil, handle: nil, locale: "fr"), now: base.now)
        }
        state = base.apply(state, try decide(state, .updateProfile(displayName: nil, handle: nil, locale: .some(nil)), now: base.now))
        #expect(state.chosenLocale == nil && state.messageLocale == "en-GB")
    }
}
