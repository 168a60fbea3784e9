import { Controller, Delete, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiErrors, Endpoint, Public } from '#platform';
import { PlaceholderDto } from './dto/email-flows.dto.js';
import { DEVICE_ID, PASSKEY_ID } from './placeholders.docs.js';

const unavailable = (message: string): PlaceholderDto => ({ available: false, message });
const PASSKEYS = unavailable('Passkeys are not available yet; sign in with a password, a magic link or SSO.');

/**
 * Mounted routes of features the service does not offer yet. Each answers 200
 * with `{available: false, message}` so that clients can feature-detect instead of handling a 404.
 * See docs/dashboard-developers.md, "Endpoints so far" (the placeholders); test/email-flows.e2e-spec.ts,
 * "placeholders".
 */
@ApiTags('Auth')
@Controller('auth')
@Public()
@ApiErrors([429])
export class PlaceholdersController {
  @Post('passkeys/registration/options')
  @HttpCode(200)
  @Endpoint({ summary: 'Passkey registration options (not available)', success: PlaceholderDto })
  registrationOptions(): PlaceholderDto {
    return PASSKEYS;
  }

  @Post('passkeys/registration/verify')
  @HttpCode(200)
  @Endpoint({ summary: 'Passkey registration (not available)', success: PlaceholderDto })
  registrationVerify(): PlaceholderDto {
    return PASSKEYS;
  }

  @Post('passkeys/authentication/options')
  @HttpCode(200)
  @Endpoint({ summary: 'Passkey authentication options (not available)', success: PlaceholderDto })
  authenticationOptions(): PlaceholderDto {
    return PASSKEYS;
  }

  @Post('passkeys/authentication/verify')
  @HttpCode(200)
  @Endpoint({ summary: 'Passkey authentication (not available)', success: PlaceholderDto })
  authenticationVerify(): PlaceholderDto {
    return PASSKEYS;
  }

  @Delete('passkeys/:id')
  @Endpoint({ summary: 'Delete a passkey (not available)', params: [PASSKEY_ID], success: PlaceholderDto })
  deletePasskey(): PlaceholderDto {
    return PASSKEYS;
  }

  @Delete('trusted-devices/:deviceId')
  @Endpoint({
    summary: 'Forget a trusted device (not available)',
    params: [DEVICE_ID],
    success: PlaceholderDto,
  })
  forgetDevice(): PlaceholderDto {
    return unavailable('Trusted devices are not available yet.');
  }

  @Post('account/unlock-request')
  @HttpCode(200)
  @Endpoint({ summary: 'Request an account unlock (not available)', success: PlaceholderDto })
  unlockRequest(): PlaceholderDto {
    return unavailable('Accounts are not locked by failed logins; use "Forgot password" to regain access.');
  }

  @Post('password-history/check')
  @HttpCode(200)
  @Endpoint({ summary: 'Check a password against history (not available)', success: PlaceholderDto })
  passwordHistory(): PlaceholderDto {
    return unavailable('Password history is not kept.');
  }

  @Post('verify-email')
  @HttpCode(200)
  @Endpoint({
    summary: 'Verify an e-mail address (not available; use complete-signup)',
    success: PlaceholderDto,
  })
  verifyEmail(): PlaceholderDto {
    return unavailable('E-mail addresses are verified by POST /auth/complete-signup.');
  }

  @Post('resend-verification')
  @HttpCode(200)
  @Endpoint({
    summary: 'Resend a verification e-mail (not available; use request-signup)',
    success: PlaceholderDto,
  })
  resendVerification(): PlaceholderDto {
    return unavailable('Send POST /auth/request-signup again to receive a new confirmation link.');
  }
}
