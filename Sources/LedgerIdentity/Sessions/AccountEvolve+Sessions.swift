import Foundation

/// `evolve` for the sessions area's events: sign-up, sign-ins and sign-outs, and the profile.
func evolveSessions(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    switch event {
    case .registered(let registered):
        state.createdAt = recordedAt
        state.email = registered.email
        state.displayName = registered.displayName
    case .sessionStarted(let started):
        if let locale = started.locale { state.locale = locale }
        if let deviceID = started.deviceID {
            state.knownDevices.removeAll { $0 == deviceID }
            state.knownDevices = Array((state.knownDevices + [deviceID]).suffix(maximumKnownDevices))
        }
        state.sessions[started.sessionID] = .init(
            id: started.sessionID, method: started.method, device: started.device, createdAt: recordedAt,
            lastUsedAt: recordedAt, accessTokenHash: started.accessTokenHash, refreshTokenHash: started.refreshTokenHash,
            accessExpiresAt: started.accessExpiresAt, refreshExpiresAt: started.refreshExpiresAt, deviceID: started.deviceID,
            secondFactor: started.secondFactor)
    case .sessionRefreshed(let refreshed):
        guard var session = state.sessions[refreshed.sessionID] else { break }
        session.accessTokenHash = refreshed.accessTokenHash
        session.refreshTokenHash = refreshed.refreshTokenHash
        session.accessExpiresAt = refreshed.accessExpiresAt
        session.refreshExpiresAt = refreshed.refreshExpiresAt
        session.lastUsedAt = recordedAt
        state.sessions[refreshed.sessionID] = session
    case .sessionRevoked(let revoked):
        guard var session = state.sessions[revoked.sessionID], session.revokedAt == nil else { break }
        session.revokedAt = recordedAt
        session.revokedReason = revoked.reason
        state.sessions[revoked.sessionID] = session
    case .loginFailed, .loginThrottled:
        break
    case .handleClaimed(let claimed):
        state.handle = claimed.handle
        state.handleIsTemporary = claimed.temporary
    case .profileUpdated(let updated):
        state.displayName = updated.displayName
    case .localeChosen(let chosen):
        state.chosenLocale = chosen.locale
    case .newDeviceAlerted:
        break
    default:
        preconditionFailure("evolve routes \(event.type) elsewhere")
    }
}
