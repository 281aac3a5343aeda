import Foundation
import LedgerIdentity
import Testing

@Suite("Reasons as enums: the same spelling on the wire, the behaviour with them")
struct ReasonTests {
    @Test("stored events decode as they were written, and encode as before")
    func wireFormat() throws {
        for reason in PasswordSetReason.allCases {
            let json = #"{"password_hash":"h","reason":"\#(reason.rawValue)"}"#
            let decoded = try JSONDecoder().decode(AccountEvent.PasswordSet.self, from: Data(json.utf8))
            #expect(decoded.reason == reason)
            let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(decoded)) as? [String: Any]
            #expect(encoded?["reason"] as? String == reason.rawValue)
        }
        #expect(PasswordSetReason.allCases.map(\.rawValue) == ["signup", "change", "reset", "rehash", "add", "revert", "imported"])
    }

    @Test("what each reason does besides setting the password")
    func behaviour() {
        #expect(PasswordSetReason.allCases.filter(\.endsResetLinks) == [.reset])
        #expect(PasswordSetReason.allCases.filter(\.endsSecondFactorChallenges) == [.change, .reset])
        #expect(PasswordSetReason.allCases.filter(\.forgetsKnownDevices) == [.reset, .revert])
        #expect(PasswordSetReason.allCases.filter(\.isPasswordChange) == [.change, .reset])
        #expect(PasswordSetReason.allCases.filter(\.isMethodAdded) == [.add])
        #expect(PasswordSetReason.allCases.filter { !$0.changesThePassword } == [.rehash])
    }

    @Test("a method removed for a reason: stored spellings decode; only Apple's and another account's removals send method_removed")
    func methodRemoval() throws {
        for reason in MethodRemovalReason.allCases {
            let json = #"{"phone":"+995511200300","reason":"\#(reason.rawValue)"}"#
            #expect(try JSONDecoder().decode(AccountEvent.PhoneRemoved.self, from: Data(json.utf8)).reason == reason)
        }
        let byOwner = try JSONDecoder().decode(AccountEvent.PhoneRemoved.self, from: Data(#"{"phone":"+995511200300"}"#.utf8))
        #expect(byOwner.reason == nil)
        #expect(MethodRemovalReason.allCases.filter(\.sendsRemovalNotice) == [.appleConsentRevoked, .provenByAnotherAccount])
    }
}
