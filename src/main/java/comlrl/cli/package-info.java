/**
 * The {@code bin/comlrl} commands (init-model, generate, train, bench, report, launch, sandbox). The only package that prints for humans or exits.
 */
package comlrl.cli;
