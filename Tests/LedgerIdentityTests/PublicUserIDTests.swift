import Foundation
import LedgerIdentity
import Testing

@Suite("PublicUserID")
struct PublicUserIDTests {
    @Test("usr_ and 10 Crockford base32 characters from the account id's leading 50 bits; read back in any case and with O, I, L")
    func roundTrip() throws {
        let accountID = try #require(UUID(uuidString: "7a3c9e01-5b2d-4f6e-8a9b-0c1d2e3f4a5b"))
        let publicID = PublicUserID(accountID: accountID)
        #expect(publicID.description.hasPrefix("usr_") && publicID.description.count == 14)
        #expect(PublicUserID(publicID.description) == publicID)
        #expect(PublicUserID(publicID.description.lowercased()) == publicID)
        #expect(PublicUserID("usr_O0000000IL") == PublicUserID("usr_0000000011"))
        for bad in ["usr_123", "usr_0000000U00", "usx_0000000000", "usr_00000000000", ""] { #expect(PublicUserID(bad) == nil) }
    }

    @Test("the id's range holds exactly the account ids that share its leading bits")
    func range() throws {
        for _ in 0..<200 {
            let accountID = UUID()
            let range = PublicUserID(accountID: accountID).accountIDs
            #expect(range.lowest.uuidString <= accountID.uuidString && accountID.uuidString <= range.highest.uuidString)
            #expect(PublicUserID(accountID: range.lowest) == PublicUserID(accountID: accountID))
            #expect(PublicUserID(accountID: range.highest) == PublicUserID(accountID: accountID))
        }
        // Ids that differ within the first 50 bits get different public ids.
        let a = try #require(UUID(uuidString: "00000000-0000-4000-8000-000000000000"))
        let b = try #require(UUID(uuidString: "00000000-0001-4000-8000-000000000000"))
        #expect(PublicUserID(accountID: a) != PublicUserID(accountID: b))
    }
}
