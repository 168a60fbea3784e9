import { actionMail, type RenderedMail } from '#platform';

// The organization name is chosen by its members: keep it to one line in the subject.
const oneLine = (value: string) => value.replace(/[\r\n\t]+/g, ' ').slice(0, 200);

/** The invitation e-mail. The link points at the dashboard (APP_URL), which shows the invite and posts it back. */
export const TeamMail = {
  invitation(
    appUrl: string,
    input: { organizationName: string; inviterEmail: string | null; role: string; token: string },
  ): RenderedMail {
    const organization = oneLine(input.organizationName);
    const inviter = input.inviterEmail ? `${input.inviterEmail} has invited you` : 'You have been invited';
    return actionMail({
      subject: `You are invited to join ${organization}`,
      greeting: 'Hello,',
      intro:
        `${inviter} to join ${organization} as ${input.role}. ` +
        'The invitation is valid for 7 days and can be used once.',
      actionLabel: 'Accept invitation',
      actionUrl: `${appUrl}/invite/${input.token}`,
      outro: 'If you did not expect this invitation, ignore this message.',
    });
  },
};
