import LedgerIdentity
import Testing

@Suite("Phone numbers: E.164 and region length rules")
struct PhoneNumberTests {
    let catalog = CountryCatalog.standard

    func phone(_ raw: String, _ iso: String) -> String? {
        PhoneNumber(raw, country: catalog.country(iso: iso)!)?.e164
    }

    @Test("Georgia: 9 digits; spaces, +995, 00995 and a trunk 0 are normalized")
    func georgia() {
        #expect(phone("511 200 300", "GE") == "+995511200300")
        #expect(phone("+995 511-200-300", "GE") == "+995511200300")
        #expect(phone("00995511200300", "GE") == "+995511200300")
        #expect(phone("0511200300", "GE") == "+995511200300")
        #expect(phone("51120030", "GE") == nil)
        #expect(phone("5112003001", "GE") == nil)
        #expect(phone("+1 511200300", "GE") == nil)
    }

    @Test("US 10 digits; UK 10, or 11 with the leading 0")
    func usAndUK() {
        #expect(phone("(201) 555-0123", "US") == "+12015550123")
        #expect(phone("1 201 555 0123", "US") == "+12015550123")
        #expect(phone("201555012", "US") == nil)
        #expect(phone("7400 123456", "GB") == "+447400123456")
        #expect(phone("07400 123456", "GB") == "+447400123456")
        #expect(phone("074001234567", "GB") == nil)
    }

    @Test("+7 regions keep the picked region with the shared dial code")
    func sharedDialCode() {
        let russia = PhoneNumber("8 912 345-67-89", country: catalog.country(iso: "RU")!)
        let kazakhstan = PhoneNumber("+7 771 000 9998", country: catalog.country(iso: "KZ")!)
        #expect(russia?.e164 == "+79123456789")
        #expect(russia?.region == "RU")
        #expect(kazakhstan?.e164 == "+77710009998")
        #expect(kazakhstan?.region == "KZ")
    }

    @Test("letters and empty input are refused")
    func junk() {
        #expect(phone("", "GE") == nil)
        #expect(phone("+", "GE") == nil)
        #expect(phone("511-CALL-NOW", "GE") == nil)
        #expect(phone("５１１２００３００", "GE") == nil)
    }
}

@Suite("Phone numbers without a picked region")
struct InternationalPhoneTests {
    @Test("an international number finds its region; shared dial codes go to the main region")
    func inference() {
        let catalog = CountryCatalog.standard
        #expect(PhoneNumber(international: "+995 511 200 300", catalog: catalog) == PhoneNumber(e164: "+995511200300", region: "GE"))
        #expect(PhoneNumber(international: "+1 201 555 0123", catalog: catalog)?.region == "US")
        #expect(PhoneNumber(international: "+7 912 345 67 89", catalog: catalog)?.region == "RU")
        #expect(PhoneNumber(international: "+44 7400 123456", catalog: catalog)?.region == "GB")
        #expect(PhoneNumber(international: "+99551120030", catalog: catalog) == nil)
        #expect(PhoneNumber(international: "511200300", catalog: catalog) == nil)
    }

    @Test("the dial-code lookup finds the countries a pass over the list finds")
    func dialCodeLookup() {
        let catalog = CountryCatalog.standard
        let numbers = catalog.countries.map { $0.dialCode + "5112003001" } + ["+", "+1", "+12", "+99", "", "995"]
        for number in numbers {
            let found = Set(catalog.countries(dialing: number).map(\.iso))
            #expect(found == Set(catalog.countries.filter { number.hasPrefix($0.dialCode) }.map(\.iso)), "\(number)")
        }
    }
}
