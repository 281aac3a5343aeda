import Foundation
import LedgerCore
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

/// The responses in the JSON a browser posts, and the client data inside them.
@Suite("Response JSON and client data")
struct ResponseJSONTests {
    static let payloadDecoder = JSONPayloadDecoder(parseDate: { _ in nil }, refusesNUL: true)

    @Test("a response posts as JSON and reads back the same, through Foundation's decoder and the service's")
    func roundTrip() throws {
        let authenticator = SoftAuthenticator()
        let (registration, credential) = authenticator.makeCredential(
            rpID: "example.com", origin: "https://example.com", challenge: [1, 2, 3], userHandle: [4])
        let assertion = authenticator.getAssertion(credential: credential, challenge: [5, 6])
        #expect(try JSONDecoder().decode(RegistrationResponseJSON.self, from: Data(registration.jsonBytes())) == registration)
        #expect(try Self.payloadDecoder.decode(RegistrationResponseJSON.self, from: registration.jsonBytes()) == registration)
        #expect(try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(assertion.jsonBytes())) == assertion)
        #expect(try Self.payloadDecoder.decode(AuthenticationResponseJSON.self, from: assertion.jsonBytes()) == assertion)
        let text = String(decoding: assertion.jsonBytes(), as: UTF8.self)
        #expect(text.contains("\"clientExtensionResults\":{}"))
        #expect(text.contains("\"type\":\"public-key\""))
    }

    /// The shape of Chromium's `toJSON()`, with extension results the service never asked for.
    static let browserRegistration = """
        {"id":"AQID","rawId":"AQID","type":"public-key","authenticatorAttachment":"platform",
         "response":{"clientDataJSON":"e30","attestationObject":"oA","transports":["hybrid","internal"],
           "publicKeyAlgorithm":-7,"publicKey":"MFkw","authenticatorData":"AA"},
         "clientExtensionResults":{"credProps":{"rk":true},"prf":{"enabled":false,"results":{"first":"AA"}},"future":[1,{"a":null}]},
         "unknownTopLevel":{"x":1}}
        """

    @Test("unknown and nested client extension results, and unknown members, do not fail decoding")
    func lenientExtensions() throws {
        for decode in [
            { try JSONDecoder().decode(RegistrationResponseJSON.self, from: Data($0.utf8)) },
            { try Self.payloadDecoder.decode(RegistrationResponseJSON.self, from: Array($0.utf8)) },
        ] as [(String) throws -> RegistrationResponseJSON] {
            let response = try decode(Self.browserRegistration)
            #expect(response.response.transports == ["hybrid", "internal"])
            #expect(response.response.publicKeyAlgorithm == -7)
            #expect(response.clientExtensionResults != nil)
            let minimal = try decode(
                #"{"id":"AQID","rawId":"AQID","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"oA"}}"#)
            #expect(minimal.clientExtensionResults == nil && minimal.authenticatorAttachment == nil && minimal.response.transports == nil)
            let nullExtensions = try decode(
                #"{"id":"AQID","rawId":"AQID","type":"public-key","clientExtensionResults":null,"authenticatorAttachment":null,"#
                    + #""response":{"clientDataJSON":"e30","attestationObject":"oA"}}"#)
            #expect(nullExtensions.clientExtensionResults == nil)
            #expect(throws: (any Error).self) { try decode(#"{"id":"AQID","rawId":"AQID","type":"public-key","response":{}}"#) }
        }
        let assertion = try Self.payloadDecoder.decode(
            AuthenticationResponseJSON.self,
            from: Array(
                (#"{"id":"AQ","rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AA","#
                    + #""signature":"AA","userHandle":null},"clientExtensionResults":{"appid":false}}"#).utf8))
        #expect(assertion.response.userHandle == nil)
        #expect(try assertion.credentialID() == [1])
    }

    static func clientData(_ json: String) -> WebAuthnError? {
        do {
            _ = try CollectedClientData(json: Array(json.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test("client data: the fields are read, unknown ones ignored; the challenge must be base64url")
    func clientDataFields() throws {
        let data = try CollectedClientData(
            json: Array(
                (#"{"type":"webauthn.get","challenge":"AQIDBA","origin":"android:apk-key-hash:abc","crossOrigin":false,"#
                    + #""topOrigin":"https://a.example","tokenBinding":{"status":"present"},"other":[1]}"#).utf8))
        #expect(data.type == "webauthn.get")
        #expect(data.challenge == [1, 2, 3, 4])
        #expect(data.origin == "android:apk-key-hash:abc")
        #expect(data.crossOrigin == false)
        #expect(data.topOrigin == "https://a.example")

        let secret = "c2VjcmV0LWNoYWxsZW5nZQ"
        // The first is padded: base64, not base64url.
        for json in [
            #"{"type":"webauthn.get","challenge":"c2VjcmV0LWNoYWxsZW5nZQ==","origin":"https://a.example"}"#,
            #"{"type":"webauthn.get","challenge":"c2VjcmV0+Y2hhbGxlbmdlQ","origin":"https://a.example"}"#,
            #"{"type":"webauthn.get","origin":"https://a.example"}"#,
            #"{"type":"webauthn.get","challenge":"c2VjcmV0LWNoYWxsZW5nZQ","origin":7}"#,
            #"{"type":"webauthn.get","challenge":"c2VjcmV0LWNoYWxsZW5nZQ","origin":"https://a.example","crossOrigin":"false"}"#,
            #"["webauthn.get","c2VjcmV0LWNoYWxsZW5nZQ"]"#, "", "{", #"{"challenge":"c2VjcmV0LWNoYWxsZW5nZQ"} trailing"#,
            // A key twice (one parser reads the first, another the last), also spelled with an escape, also nested.
            #"{"type":"webauthn.get","challenge":"c2VjcmV0LWNoYWxsZW5nZQ","origin":"https://evil.example","origin":"https://a.example"}"#,
            #"{"type":"webauthn.get","challenge":"c2VjcmV0LWNoYWxsZW5nZQ","origin":"https://a.example","\u006frigin":"https://b.example"}"#,
            #"{"type":"webauthn.get","challenge":"c2VjcmV0LWNoYWxsZW5nZQ","origin":"https://a.example","tokenBinding":{"id":1,"id":2}}"#,
        ] {
            let error = try #require(Self.clientData(json), "\(json)")
            #expect(error.code == .malformed)
            // Messages go to logs: they never quote the challenge.
            #expect(!error.message.contains("c2VjcmV0"), "\(error.message)")
            #expect(!error.description.contains(secret))
        }
        let huge =
            #"{"type":"webauthn.get","challenge":"AA","origin":"https://a.example","pad":""#
            + String(repeating: "x", count: 20000) + #""}"#
        #expect(Self.clientData(huge)?.code == .malformed)
    }

    @Test("origins are serialized as a browser does: lower-case scheme and host, no default port; anything else is nil")
    func originSerialization() {
        let serialized: [(String, String)] = [
            ("https://app.example.com", "https://app.example.com"), ("HTTPS://App.Example.COM", "https://app.example.com"),
            ("https://app.example.com:443", "https://app.example.com"), ("http://localhost:80", "http://localhost"),
            ("http://localhost:8080", "http://localhost:8080"), ("https://app.example.com:0443", "https://app.example.com"),
            ("https://[::1]:8443", "https://[::1]:8443"), ("https://[::1]", "https://[::1]"),
            ("http://127.0.0.1:3000", "http://127.0.0.1:3000"),
            ("android:apk-key-hash:d2hhdGV2ZXI", "android:apk-key-hash:d2hhdGV2ZXI"),
        ]
        for (text, expected) in serialized {
            #expect(RelyingParty.serializedOrigin(text) == expected, "\(text)")
        }
        for text in [
            "https://app.example.com/", "https://app.example.com/path", "https://app.example.com?x", "https://app.example.com#x",
            "https://user@app.example.com", "ftp://app.example.com", "app.example.com", "https://", "https://:443",
            "https://app.example.com:", "https://app.example.com:99999", "https://app.example.com:-1", "https://h\u{00F4}st.example",
            "https://app example.com", "https://[::1", "https://[::1]x", "android:apk-key-hash:", "android:apk-key-hash:a+b/c=", "null", "",
        ] {
            #expect(RelyingParty.serializedOrigin(text) == nil, "\(text)")
        }
    }

    @Test("the relying party compares client data origins with its configured ones as serialized")
    func configuredOriginsNormalized() throws {
        let relyingParty = RelyingParty(id: "example.com", origins: ["HTTPS://App.Example.com:443", "https://trailing.example.com/"])
        #expect(relyingParty.origins == ["https://app.example.com", "https://trailing.example.com/"])
        let authenticator = SoftAuthenticator()
        func code(_ origin: String) -> WebAuthnError.Code? {
            let response = authenticator.makeCredential(rpID: "example.com", origin: origin, challenge: [1], userHandle: [1]).response
            return refusal { _ = try relyingParty.verifyRegistration(response, challenge: [1]) }
        }
        #expect(code("https://app.example.com") == nil)
        #expect(code("https://App.Example.com") == .origin)
        #expect(code("https://app.example.com:443") == .origin)
        // A configured origin that is not one is kept verbatim and matches nothing a browser sends.
        #expect(code("https://trailing.example.com") == .origin)
    }

    @Test("errors carry their code's name and say which check refused")
    func errorDescriptions() {
        let error = WebAuthnError(.rpIDHash, "the authenticator data is for another RP id")
        #expect(error.description == "WebAuthnError(rp_id_hash): the authenticator data is for another RP id")
        #expect(WebAuthnError.Code.userVerification.description == "user_verification")
        #expect(error == WebAuthnError(.rpIDHash, "the authenticator data is for another RP id"))
        #expect(error != WebAuthnError(.counter, "the authenticator data is for another RP id"))
    }
}
