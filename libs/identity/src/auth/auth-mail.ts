import { actionMail, type RenderedMail } from '#platform';

/** The e-mails of the local identity flows. Links point at the dashboard (APP_URL), which posts the token back. */
export const AuthMail = {
  verifySignup(appUrl: string, name: string, token: string): RenderedMail {
    return actionMail({
      subject: 'Confirm your e-mail address',
      greeting: `Hello ${name},`,
      intro: 'Confirm your e-mail address to finish creating your account. The link is valid for 24 hours.',
      actionLabel: 'Confirm e-mail address',
      actionUrl: `${appUrl}/verify-email/${token}`,
      outro: 'If you did not sign up, ignore this message.',
    });
  },
  alreadyRegistered(appUrl: string): RenderedMail {
    return actionMail({
      subject: 'You already have an account',
      greeting: 'Hello,',
      intro: 'Someone tried to sign up with this e-mail address, which already has an account.',
      actionLabel: 'Log in',
      actionUrl: `${appUrl}/login`,
      outro:
        'If you forgot your password, use "Forgot password" on the login page. If this was not you, ignore this message.',
    });
  },
  passwordReset(appUrl: string, token: string): RenderedMail {
    return actionMail({
      subject: 'Reset your password',
      greeting: 'Hello,',
      intro:
        'Use this link to choose a new password. It is valid for one hour and can be used once; every session is signed out.',
      actionLabel: 'Reset password',
      actionUrl: `${appUrl}/reset-password/${token}`,
      outro: 'If you did not ask for this, ignore this message: your password stays unchanged.',
    });
  },
  magicLink(appUrl: string, token: string): RenderedMail {
    return actionMail({
      subject: 'Your sign-in link',
      greeting: 'Hello,',
      intro: 'Use this link to sign in. It is valid for 15 minutes and can be used once.',
      actionLabel: 'Sign in',
      actionUrl: `${appUrl}/magic-link/${token}`,
      outro: 'If you did not ask for this, ignore this message.',
    });
  },
};
