import { describe, expect, it } from 'vitest';
import { estimateConfidence } from './confidence.js';

describe('estimateConfidence', () => {
  it('gives 0.9 to plain, confident output', () => {
    expect(estimateConfidence('Refunds are accepted within 30 days.')).toBe(0.9);
  });

  it('subtracts 0.3 for empty or whitespace-only output: 0.9 - 0.3 = 0.6', () => {
    expect(estimateConfidence('')).toBe(0.6);
    expect(estimateConfidence('   \n\t')).toBe(0.6);
  });

  it('subtracts 0.15 for one hedging phrase, case-insensitive: 0.9 - 0.15 = 0.75', () => {
    expect(estimateConfidence('I THINK the refund window is 30 days.')).toBe(0.75);
    expect(estimateConfidence('It might be in the second drawer.')).toBe(0.75);
    expect(estimateConfidence('I cannot be certain about that.')).toBe(0.75);
  });

  it('counts each distinct phrase once: a repeated phrase still gives 0.75', () => {
    expect(estimateConfidence('I think so. I think it is. I think.')).toBe(0.75);
  });

  it('subtracts 0.3 for two phrases and 0.45 for three: 0.6 and 0.45', () => {
    expect(estimateConfidence("I'm not sure, possibly.")).toBe(0.6);
    expect(estimateConfidence('I think it might be, possibly.')).toBe(0.45);
  });

  it('caps hedging at 0.45: four or six phrases give 0.9 - 0.45 = 0.45', () => {
    expect(estimateConfidence('I think it might be there, possibly; I cannot be certain.')).toBe(0.45);
    expect(
      estimateConfidence("I'm not sure. I am not sure. I think it possibly might be. I cannot be certain."),
    ).toBe(0.45);
  });

  it('subtracts 0.2 for a refusal: 0.7, and 0.55 with one hedge (0.9 - 0.2 - 0.15)', () => {
    expect(estimateConfidence("I'm unable to process that request.")).toBe(0.7);
    expect(estimateConfidence('Sorry, I cannot help with that.')).toBe(0.7);
    expect(estimateConfidence("I can't help with that, I think.")).toBe(0.55);
  });

  it('subtracts the refusal once however many refusal phrases appear', () => {
    expect(estimateConfidence("I can't help. I cannot help. I'm unable.")).toBe(0.7);
  });

  it('reaches its floor with a refusal and three or more hedges: 0.9 - 0.45 - 0.2 = 0.25', () => {
    expect(estimateConfidence("I'm unable to help; I think it might be possibly wrong.")).toBe(0.25);
  });

  it('reads a typographic apostrophe as a plain one', () => {
    expect(estimateConfidence('I’m not sure.')).toBe(0.75);
    expect(estimateConfidence('I can’t help with that.')).toBe(0.7);
  });

  it('matches whole words only: "impossibly" and "Hawaii thinks" are not hedges', () => {
    expect(estimateConfidence('This is impossibly fast.')).toBe(0.9);
    expect(estimateConfidence('Hawaii thinks big.')).toBe(0.9);
  });

  it('returns exact two-decimal values', () => {
    for (const text of [
      '',
      'I think',
      'I think, possibly',
      'I think, possibly, might be',
      "I'm unable. I think",
    ]) {
      const value = estimateConfidence(text);
      expect(Math.round(value * 100) / 100).toBe(value);
    }
  });
});
