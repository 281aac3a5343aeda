import Foundation
import LedgerCore

// The snapshot encoding of an account's state. The fields are listed in declaration order;
// `AccountStateCodecTests` fails when a type gains a field that is not listed here. Any change
// to these lists (or to what `evolve` means) must bump `AccountSnapshots.format`.

extension AccountState: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(accountID)
        writer.write(version)
        writer.write(createdAt)
        writer.write(email)
        writer.write(emailVerified)
        writer.write(passwordHash)
        writer.write(passwordChangedAt)
        writer.write(displayName)
        writer.write(handle)
        writer.write(handleIsTemporary)
        writer.write(phone)
        writer.write(phoneRegion)
        writer.write(providerSubjects)
        writer.write(providerTokens)
        writer.write(holds)
        writer.write(deletedAt)
        writer.write(purgeAfter)
        writer.write(purgedAt)
        writer.write(disabledAt)
        writer.write(disabledReason)
        writer.write(appleNotificationIDs)
        writer.write(deletionRequestedAt)
        writer.write(reauthGrants)
        writer.write(reauthNonces)
        writer.write(sessions)
        writer.write(pendingLinks)
        writer.write(linkSendTimes)
        writer.write(totp)
        writer.write(recoveryCodeHashes)
        writer.write(mfaChallenges)
        writer.write(knownDevices)
        writer.write(methodOrigins)
        writer.write(pendingEmail)
        writer.write(locale)
        writer.write(passkeys)
        writer.write(passkeyUserHandle)
        writer.write(passkeyOnlySince)
        writer.write(codesEndedAt)
        writer.write(importedFrom)
        writer.write(avatarETag)
        writer.write(chosenLocale)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(accountID: try reader.read())
        version = try reader.read()
        createdAt = try reader.read()
        email = try reader.read()
        emailVerified = try reader.read()
        passwordHash = try reader.read()
        passwordChangedAt = try reader.read()
        displayName = try reader.read()
        handle = try reader.read()
        handleIsTemporary = try reader.read()
        phone = try reader.read()
        phoneRegion = try reader.read()
        providerSubjects = try reader.read()
        providerTokens = try reader.read()
        holds = try reader.read()
        deletedAt = try reader.read()
        purgeAfter = try reader.read()
        purgedAt = try reader.read()
        disabledAt = try reader.read()
        disabledReason = try reader.read()
        appleNotificationIDs = try reader.read()
        deletionRequestedAt = try reader.read()
        reauthGrants = try reader.read()
        reauthNonces = try reader.read()
        sessions = try reader.read()
        pendingLinks = try reader.read()
        linkSendTimes = try reader.read()
        totp = try reader.read()
        recoveryCodeHashes = try reader.read()
        mfaChallenges = try reader.read()
        knownDevices = try reader.read()
        methodOrigins = try reader.read()
        pendingEmail = try reader.read()
        locale = try reader.read()
        passkeys = try reader.read()
        passkeyUserHandle = try reader.read()
        passkeyOnlySince = try reader.read()
        codesEndedAt = try reader.read()
        importedFrom = try reader.read()
        avatarETag = try reader.read()
        chosenLocale = try reader.read()
    }
}

extension AccountState.Session: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(id)
        writer.write(method)
        writer.write(device)
        writer.write(createdAt)
        writer.write(lastUsedAt)
        writer.write(accessTokenHash)
        writer.write(refreshTokenHash)
        writer.write(accessExpiresAt)
        writer.write(refreshExpiresAt)
        writer.write(revokedAt)
        writer.write(revokedReason)
        writer.write(deviceID)
        writer.write(secondFactor)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            id: try reader.read(), method: try reader.read(), device: try reader.read(), createdAt: try reader.read(),
            lastUsedAt: try reader.read(), accessTokenHash: try reader.read(), refreshTokenHash: try reader.read(),
            accessExpiresAt: try reader.read(), refreshExpiresAt: try reader.read(),
            revokedAt: try reader.read(), revokedReason: try reader.read(), deviceID: try reader.read(), secondFactor: try reader.read())
    }
}

extension AccountState.PendingLink: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(id)
        writer.write(purpose)
        writer.write(email)
        writer.write(expiresAt)
        writer.write(sessionID)
        writer.write(undoes)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            id: try reader.read(), purpose: try reader.read(), email: try reader.read(), expiresAt: try reader.read(),
            sessionID: try reader.read(), undoes: try reader.read())
    }
}

extension AccountState.RevertibleChange: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(version)
        writer.write(sessionID)
        writer.write(hadPassword)
        writer.write(at)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(version: try reader.read(), sessionID: try reader.read(), hadPassword: try reader.read(), at: try reader.read())
    }
}

extension AccountState.MethodOrigin: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(version)
        writer.write(sessionID)
        writer.write(at)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(version: try reader.read(), sessionID: try reader.read(), at: try reader.read())
    }
}

extension AccountState.PendingEmail: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(email)
        writer.write(linkID)
        writer.write(passwordHash)
        writer.write(sessionID)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(email: try reader.read(), linkID: try reader.read(), passwordHash: try reader.read(), sessionID: try reader.read())
    }
}

extension AccountState.PendingLink.Purpose: ByteCodable {}

extension AccountState.ReauthGrant: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(id)
        writer.write(sessionID)
        writer.write(method)
        writer.write(tokenHash)
        writer.write(expiresAt)
        writer.write(passkeyID)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            id: try reader.read(), sessionID: try reader.read(), method: try reader.read(), tokenHash: try reader.read(),
            expiresAt: try reader.read(), passkeyID: try reader.read())
    }
}

extension AccountState.ReauthNonce: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(id)
        writer.write(sessionID)
        writer.write(nonceHash)
        writer.write(expiresAt)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(id: try reader.read(), sessionID: try reader.read(), nonceHash: try reader.read(), expiresAt: try reader.read())
    }
}

extension Hold: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(ref)
        writer.write(kind)
        writer.write(startsAt)
        writer.write(title)
        writer.write(amount)
        writer.write(releasesAt)
        writer.write(keyID)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            ref: try reader.read(), kind: try reader.read(), startsAt: try reader.read(), title: try reader.read(),
            amount: try reader.read(), releasesAt: try reader.read(), keyID: try reader.read())
    }
}

extension Money: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(currency)
        writer.write(minor)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(currency: try reader.read(), minor: try reader.read())
    }
}

extension HoldKind: ByteCodable {}
extension IdentityProvider: ByteCodable {}

extension AccountState.ProviderToken: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(provider)
        writer.write(subject)
        writer.write(clientID)
        writer.write(refreshToken)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(provider: try reader.read(), subject: try reader.read(), clientID: try reader.read(), refreshToken: try reader.read())
    }
}

extension AccountState.TOTPState: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(secret)
        writer.write(enabled)
        writer.write(lastUsedStep)
        writer.write(enrolledBy)
        writer.write(enabledOrigin)
        writer.write(recoveryCodesOrigin)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            secret: try reader.read(), enabled: try reader.read(), lastUsedStep: try reader.read(), enrolledBy: try reader.read(),
            enabledOrigin: try reader.read(), recoveryCodesOrigin: try reader.read())
    }
}

extension AccountState.MFAChallenge: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(id)
        writer.write(tokenHash)
        writer.write(method)
        writer.write(device)
        writer.write(expiresAt)
        writer.write(failures)
        writer.write(linkToken)
        writer.write(deviceID)
        writer.write(providerToken)
        writer.write(parkedRevocationID)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            id: try reader.read(), tokenHash: try reader.read(), method: try reader.read(), device: try reader.read(),
            expiresAt: try reader.read(), failures: try reader.read(), linkToken: try reader.read(), deviceID: try reader.read(),
            providerToken: try reader.read(), parkedRevocationID: try reader.read())
    }
}

extension AccountState.Passkey: ByteCodable {
    public func write(to writer: inout ByteWriter) {
        writer.write(id)
        writer.write(credentialID)
        writer.write(publicKey)
        writer.write(algorithm)
        writer.write(signCount)
        writer.write(name)
        writer.write(createdAt)
        writer.write(lastUsedAt)
        writer.write(backupEligible)
        writer.write(backedUp)
        writer.write(transports)
        writer.write(origin)
    }

    public init(from reader: inout ByteReader) throws {
        self.init(
            id: try reader.read(), credentialID: try reader.read(), publicKey: try reader.read(), algorithm: try reader.read(),
            signCount: try reader.read(), name: try reader.read(), createdAt: try reader.read(), lastUsedAt: try reader.read(),
            backupEligible: try reader.read(), backedUp: try reader.read(), transports: try reader.read(), origin: try reader.read())
    }
}
