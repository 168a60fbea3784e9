import { moduleErrorCodes } from '#platform';
/** Error codes of subjects (docs/data-protection.md). */
export const SubjectErrorCode = moduleErrorCodes({
  /** The subject is under a legal hold: erasure is refused until it is lifted. */
  SUBJECT_ON_HOLD: 'SUBJECT_ON_HOLD',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof SubjectErrorCode)[keyof typeof SubjectErrorCode], true> {}
  interface OutboxTopics {
    /** A subject's erasure (the subject_erasures row it names), run in batches until done. */
    'subject.erase': { payload: { erasureId: string } };
  }
}
