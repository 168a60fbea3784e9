/**
 * The operationId of every route, by its Nest key (`<controller class without Controller>_<method>`): the names a
 * client generated from the OpenAPI document calls its methods by. The rule: a verb then what it acts on, in
 * camelCase (`listAgents`, `getAgent`, `createAgent`, `updateAgent`, `deleteAgent`, `regenerateAgentKey`); lists
 * are plural, one item singular; SCIM's routes start with `scim` (`scimListUsers`). `operationIdOf` refuses a route
 * that is not here, so a new route cannot ship without a name; `operation-ids.spec.ts` checks that the names are
 * camelCase and unique.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  // System
  System_health: 'getHealth',
  System_live: 'getLiveness',
  System_ready: 'getReadiness',
  System_versions: 'listSchemaVersions',

  // Auth: registration, login, sessions
  Auth_register: 'register',
  Auth_login: 'login',
  Auth_logout: 'logout',
  Auth_me: 'getMe',
  EmailFlows_requestSignup: 'requestSignup',
  EmailFlows_completeSignup: 'completeSignup',
  EmailFlows_forgotPassword: 'forgotPassword',
  EmailFlows_resetPassword: 'resetPassword',
  EmailFlows_changePassword: 'changePassword',
  EmailFlows_magicLink: 'requestMagicLink',
  EmailFlows_verifyMagicLink: 'verifyMagicLink',
  Placeholders_registrationOptions: 'getPasskeyRegistrationOptions',
  Placeholders_registrationVerify: 'verifyPasskeyRegistration',
  Placeholders_authenticationOptions: 'getPasskeyAuthenticationOptions',
  Placeholders_authenticationVerify: 'verifyPasskeyAuthentication',
  Placeholders_deletePasskey: 'deletePasskey',
  Placeholders_forgetDevice: 'forgetTrustedDevice',
  Placeholders_unlockRequest: 'requestAccountUnlock',
  Placeholders_passwordHistory: 'checkPasswordHistory',
  Placeholders_verifyEmail: 'verifyEmail',
  Placeholders_resendVerification: 'resendVerificationEmail',
  Mfa_setup: 'setUpMfa',
  Mfa_enable: 'enableMfa',
  Mfa_disable: 'disableMfa',
  Mfa_login: 'loginWithMfa',
  Mfa_generateBackupCodes: 'generateBackupCodes',
  Mfa_resend: 'resendMfaCode',
  Mfa_securitySettings: 'getSecuritySettings',
  ApiKeys_create: 'createApiKey',
  ApiKeys_list: 'listApiKeys',
  ApiKeys_update: 'updateApiKey',
  ApiKeys_revoke: 'revokeApiKey',
  StreamToken_issue: 'createStreamToken',
  Sessions_refresh: 'refreshSession',
  Sessions_revokeAll: 'revokeAllSessions',
  Sessions_revokeOne: 'revokeSession',
  Sessions_list: 'listSessions',
  Sessions_setSessionTimeout: 'setSessionTimeout',
  Profile_organizations: 'listMyOrganizations',
  Profile_switchOrganization: 'switchOrganization',
  Profile_updateProfile: 'updateProfile',
  Profile_preferences: 'getPreferences',
  Profile_updatePreferences: 'updatePreferences',
  Profile_loginActivity: 'listLoginActivity',

  // Organizations, billing, team
  Organizations_current: 'getCurrentOrganization',
  Organizations_update: 'updateCurrentOrganization',
  Organizations_remove: 'deleteCurrentOrganization',
  Billing_plan: 'getBillingPlan',
  Billing_checkout: 'createBillingCheckout',
  Billing_portal: 'openBillingPortal',
  Team_list: 'listMembers',
  Team_changeRole: 'changeMemberRole',
  Team_suspend: 'suspendMember',
  Team_reactivate: 'reactivateMember',
  Team_remove: 'removeMember',
  Invitations_create: 'createInvitation',
  Invitations_list: 'listInvitations',
  Invitations_revoke: 'revokeInvitation',
  Invitations_resend: 'resendInvitation',
  Invitations_validate: 'validateInvitation',
  Invitations_accept: 'acceptInvitation',

  // SSO, SAML, social login, the SCIM token
  SsoConfig_get: 'getSsoConfig',
  SsoConfig_put: 'replaceSsoConfig',
  SsoConfig_remove: 'deleteSsoConfig',
  SsoConfig_test: 'testSsoConfig',
  SsoDomains_list: 'listSsoDomains',
  SsoDomains_claim: 'claimSsoDomain',
  SsoDomains_verify: 'verifySsoDomain',
  SsoDomains_drop: 'deleteSsoDomain',
  SsoLogin_initiate: 'initiateSso',
  SsoLogin_callback: 'handleSsoCallback',
  SsoLogin_oauthToken: 'takeOAuthToken',
  SsoLogin_mfaExchange: 'takeSsoMfaToken',
  Saml_initiate: 'initiateSaml',
  Saml_callback: 'handleSamlCallback',
  Saml_metadata: 'getSamlMetadata',
  Saml_logoutInitiate: 'initiateSamlLogout',
  Saml_logoutRedirect: 'handleSamlLogoutRedirect',
  Saml_logoutCallback: 'handleSamlLogoutCallback',
  SocialLogin_github: 'startGithubLogin',
  SocialLogin_githubCallback: 'handleGithubCallback',
  SocialLogin_google: 'startGoogleLogin',
  SocialLogin_googleCallback: 'handleGoogleCallback',
  SocialLogin_microsoft: 'startMicrosoftLogin',
  SocialLogin_microsoftCallback: 'handleMicrosoftCallback',
  ScimToken_rotate: 'rotateScimToken',
  ScimToken_status: 'getScimTokenStatus',
  ScimToken_revoke: 'revokeScimToken',

  // SCIM 2.0 (/scim/v2)
  Scim_serviceProviderConfig: 'scimGetServiceProviderConfig',
  Scim_resourceTypes: 'scimListResourceTypes',
  Scim_resourceType: 'scimGetResourceType',
  Scim_schemas: 'scimListSchemas',
  Scim_schema: 'scimGetSchema',
  Scim_listUsers: 'scimListUsers',
  Scim_createUser: 'scimCreateUser',
  Scim_getUser: 'scimGetUser',
  Scim_replaceUser: 'scimReplaceUser',
  Scim_patchUser: 'scimPatchUser',
  Scim_deleteUser: 'scimDeleteUser',
  Scim_listGroups: 'scimListGroups',
  Scim_createGroup: 'scimCreateGroup',
  Scim_getGroup: 'scimGetGroup',
  Scim_patchGroup: 'scimPatchGroup',
  Scim_replaceGroup: 'scimReplaceGroup',
  Scim_deleteGroup: 'scimDeleteGroup',

  // Audit
  AuditPublicKey_publicKey: 'getAuditPublicKeys',
  Audit_list: 'listAuditEntries',
  Audit_verify: 'verifyAuditChain',
  Audit_listCheckpoints: 'listAuditCheckpoints',
  Audit_createCheckpoint: 'createAuditCheckpoint',
  Audit_export: 'exportAuditLog',
  Audit_get: 'getAuditEntry',

  // Agents, policies, traces
  Agents_list: 'listAgents',
  Agents_create: 'createAgent',
  Agents_get: 'getAgent',
  Agents_update: 'updateAgent',
  Agents_remove: 'deleteAgent',
  Agents_regenerateKey: 'regenerateAgentKey',
  Policies_list: 'listPolicies',
  Policies_create: 'createPolicy',
  Policies_templates: 'listPolicyTemplates',
  Policies_get: 'getPolicy',
  Policies_update: 'updatePolicy',
  Policies_remove: 'deletePolicy',
  Traces_ingest: 'ingestTrace',
  Traces_list: 'listTraces',
  Traces_similar: 'listSimilarTraces',
  Traces_get: 'getTrace',
  Traces_verify: 'verifyTraceContent',
  TraceExplanations_explain: 'getTraceExplanation',
  Otel_export: 'exportOtlpTraces',
  TracePurge_purge: 'purgeTraces',
  Subjects_decisions: 'listSubjectDecisions',
  Subjects_requestErasure: 'eraseSubject',
  Subjects_erasure: 'getSubjectErasure',
  Subjects_hold: 'holdSubject',
  Subjects_release: 'releaseSubjectHold',
  SubjectReports_report: 'getSubjectReport',

  // Review
  ApprovalPatterns_list: 'listApprovalPatterns',
  ApprovalPatterns_signoff: 'signOffApprovalPattern',
  ApprovalPatterns_revoke: 'revokeApprovalPattern',
  ReviewQueue_list: 'listReviewItems',
  ReviewQueue_bulk: 'decideReviewItems',
  ReviewQueue_decide: 'decideReviewItem',
  ReviewQueue_assign: 'assignReviewItem',

  // Webhooks and the event stream
  Webhooks_list: 'listWebhooks',
  Webhooks_create: 'createWebhook',
  Webhooks_get: 'getWebhook',
  Webhooks_update: 'updateWebhook',
  Webhooks_delete: 'deleteWebhook',
  Webhooks_rotateSecret: 'rotateWebhookSecret',
  Webhooks_test: 'testWebhook',
  Webhooks_deliveries: 'listWebhookDeliveries',
  Webhooks_redeliver: 'redeliverWebhookDelivery',
  EventStream_stream: 'streamEvents',
  /** Written by hand in openapi.ts: the WebSocket route is not a controller's. */
  EventStream_websocket: 'streamEventsWebSocket',

  // CPI (human feedback)
  Cpi_rollup: 'getCpiRollup',
  Cpi_analytics: 'getCpiAnalytics',
  Cpi_ingest: 'ingestCpiFeedback',

  // Integrations
  IntegrationConfirmation_confirm: 'confirmIntegrationRecipient',
  Integrations_list: 'listIntegrations',
  Integrations_create: 'createIntegration',
  Integrations_get: 'getIntegration',
  Integrations_update: 'updateIntegration',
  Integrations_remove: 'deleteIntegration',
  Integrations_test: 'testIntegration',

  // Compliance: FRIA, mapping, incidents, reports, alerts
  Fria_list: 'listFrias',
  Fria_create: 'createFria',
  Fria_get: 'getFria',
  Fria_update: 'updateFria',
  Fria_remove: 'deleteFria',
  Fria_verify: 'verifyFria',
  Fria_history: 'listFriaHistory',
  Fria_transition: 'transitionFria',
  Fria_submit: 'submitFria',
  Fria_approve: 'approveFria',
  ComplianceMapping_catalogue: 'getComplianceCatalogue',
  ComplianceMapping_crosswalk: 'getComplianceCrosswalk',
  ComplianceMapping_get: 'getComplianceMapping',
  ComplianceMapping_update: 'updateComplianceMapping',
  LegacyNotes_read: 'getLegacyMappingNotes',
  LegacyNotes_replace: 'replaceLegacyMappingNotes',
  Incidents_list: 'listIncidents',
  Incidents_create: 'createIncident',
  Incidents_get: 'getIncident',
  Incidents_update: 'updateIncident',
  Reports_compliance: 'getComplianceReport',
  ScheduledReports_list: 'listScheduledReports',
  ScheduledReports_create: 'createScheduledReport',
  ScheduledReports_get: 'getScheduledReport',
  ScheduledReports_update: 'updateScheduledReport',
  ScheduledReports_remove: 'deleteScheduledReport',
  ScheduledReports_sendNow: 'sendScheduledReportNow',
  Alerts_list: 'listAlerts',
  Alerts_create: 'createAlert',
  Alerts_get: 'getAlert',
  Alerts_update: 'updateAlert',
  Alerts_remove: 'deleteAlert',
  Alerts_history: 'listAlertHistory',
};

/** The Nest key of a route: its controller's class name without `Controller`, its method, and a version if any. */
export function nestOperationKey(controllerKey: string, methodKey: string, version?: string): string {
  return [controllerKey.replace(/Controller$/, ''), methodKey, ...(version ? [version] : [])].join('_');
}

/** The operationId of a route (the `operationIdFactory` of the document); throws for a route with no name. */
export function operationIdOf(controllerKey: string, methodKey: string, version?: string): string {
  const key = nestOperationKey(controllerKey, methodKey, version);
  const id = Object.hasOwn(OPERATION_IDS, key) ? OPERATION_IDS[key] : undefined;
  if (!id) {
    throw new Error(
      `The route ${key} has no operationId: add it to OPERATION_IDS in apps/api/src/operation-ids.ts ` +
        '(a verb and what it acts on, in camelCase)',
    );
  }
  return id;
}
