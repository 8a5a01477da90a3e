/*
 * One card on the board, and what it does when someone else changes it while
 * this user is editing it.
 *
 * Herald.sync sets the card's model as other users' changes arrive. The view
 * then updates, field by field, what this user is not editing, and leaves
 * alone the field they are editing (focused, or changed and not yet saved):
 * their text stays as it is, caret and all, and beside the field a notice
 * says who changed it and to what ("Changed by bob: “…”"), with two
 * choices. "Use theirs" puts the new value in the field; "Keep mine" closes
 * the notice and keeps the field as this user has it, so that saving writes
 * theirs over it (a select has no separate save: keeping it saves it).
 * Notices sit in polite live regions, so a screen reader says them without
 * cutting in on the typing.
 *
 * Deleted by someone else while this user is in it, the card leaves a notice
 * in its place that keeps her text (deleted-card.js).
 *
 * The view shows the card's column by where it stands; it triggers `column`
 * when that changes and the board moves it (see board.js).
 */
(function () {
  'use strict';

  var e = _.escape;
  var COLUMN_NAMES = {todo: 'To do', doing: 'Doing', done: 'Done'};

  // The fields a person edits: their control, where their notice goes, how a notice reads.
  var FIELDS = {
    title: {control: '.edit-form input[name=title]', slot: '.notices-title', changed: 'Changed',
            text: function (value) { return '“' + value + '”'; }},
    column: {control: 'select.move', slot: '.notices-controls', changed: 'Column changed',
             text: function (value) { return COLUMN_NAMES[value] || value; }},
    assignee: {control: 'select.assign', slot: '.notices-controls', changed: 'Assignee changed',
               text: function (value) { return value || 'nobody'; }}
  };

  function same(a, b) {
    return (a == null ? '' : String(a)) === (b == null ? '' : String(b));
  }

  function options(values, selected, labels) {
    return _.map(values, function (value) {
      return '<option value="' + e(value) + '"' + (value === selected ? ' selected' : '') + '>' +
        e(labels ? labels[value] : value) + '</option>';
    }).join('');
  }

  var CardView = Backbone.View.extend({
    tagName: 'li',
    className: 'card-item',

    events: {
      'click .edit': 'edit',
      'submit .edit-form': 'save',
      'click .cancel': 'cancel',
      'change .move': 'move',
      'change .assign': 'assign',
      'click .delete': 'destroy',
      'click .conflict .theirs': 'useTheirs',
      'click .conflict .mine': 'keepMine'
    },

    // options.config: the page's users and columns.
    initialize: function (options) {
      this.config = options.config;
      this.listenTo(this.model, 'change', this.update);
      this.listenTo(this.model, 'remove', this.removed);
    },

    // The whole card, as the model has it; no notices.
    render: function () {
      var card = this.model.toJSON(), id = e(card.id);
      this.shown = _.pick(card, _.keys(FIELDS));  // what the card shows of each field
      this.kept = {};  // fields whose notice was answered "Keep mine", until saved or cancelled
      this.$el.attr('data-id', card.id).html(
        '<p class="title">' + e(card.title) + '</p>' +
        '<div class="notices notices-title" aria-live="polite"></div>' +
        '<p class="meta"></p>' +
        '<div class="controls">' +
          '<button type="button" class="edit">Edit</button>' +
          '<label class="sr-only" for="move-' + id + '">Column</label>' +
          '<select class="move" id="move-' + id + '">' +
            options(this.config.columns, card.column, COLUMN_NAMES) + '</select>' +
          '<label class="sr-only" for="assign-' + id + '">Assignee</label>' +
          '<select class="assign" id="assign-' + id + '"><option value="">nobody</option>' +
            options(this.config.users, card.assignee) + '</select>' +
          '<button type="button" class="delete">Delete</button>' +
        '</div>' +
        '<div class="notices notices-controls" aria-live="polite"></div>');
      this.renderMeta();
      return this;
    },

    // Version, who changed it last and when, and the buttons' names: always as the model has them.
    renderMeta: function () {
      var card = this.model.toJSON(), at = new Date(card.updated_at * 1000);
      this.$el.attr('data-version', card.version);
      this.$('.meta').html(
        'v' + e(card.version) + ' · ' + e(card.updated_by || '') + ' · ' +
        '<time datetime="' + e(at.toISOString()) + '">' +
        e(at.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'})) + '</time>');
      this.$('.edit').attr('aria-label', 'Edit ' + card.title);
      this.$('.delete').attr('aria-label', 'Delete ' + card.title);
    },

    // ---- Live changes ----------------------------------------------------------

    // The model changed (a live change, a fetch, or this user's own save
    // answered): each changed field is shown, unless it is being edited and
    // holds something else, in which case it gets a notice instead.
    update: function (model) {
      var changed = model.changedAttributes() || {};
      this.renderMeta();
      _.each(_.keys(FIELDS), function (name) {
        if (!_.has(changed, name)) return;
        var value = model.get(name);
        if (this.editing(name) && !same(this.value(name), value)) {
          this.notice(name, value, model.get('updated_by'));
        } else {
          this.show(name, value);
        }
      }, this);
    },

    control: function (name) {
      return this.$(FIELDS[name].control);
    },

    // What the field's control holds now (undefined when it has none: a title not open).
    value: function (name) {
      var control = this.control(name);
      if (!control.length) return undefined;
      return name === 'assignee' ? control.val() || null : control.val();
    },

    // Being edited: focused, or holding what the card did not show, or kept by choice.
    editing: function (name) {
      var control = this.control(name);
      if (!control.length) return false;
      return control[0] === document.activeElement || this.kept[name] ||
        !same(this.value(name), this.shown[name]);
    },

    // Show `value` in the field, replacing what it held, and drop its notice.
    show: function (name, value) {
      var moved = name === 'column' && !same(value, this.shown.column);
      this.shown[name] = value;
      delete this.kept[name];
      this.dropNotice(name);
      if (name === 'title' && !this.control(name).length) this.$('.title').text(value);
      else this.control(name).val(name === 'assignee' ? value || '' : value);
      if (moved) this.trigger('column', this);
    },

    // Say who changed the field being edited, and to what, with the two choices.
    notice: function (name, value, by) {
      var field = FIELDS[name], textId = 'conflict-' + this.cid + '-' + name;
      var notice = $('<div class="conflict" role="group">')
        .attr({'data-field': name, 'aria-labelledby': textId})
        .append($('<p class="conflict-text">').attr('id', textId)
          .append($('<strong>').text(field.changed + ' by ' + (by || 'someone else') + ':'))
          .append(document.createTextNode(' ' + field.text(value))))
        .append($('<div class="choices">')
          .append($('<button type="button" class="theirs">Use theirs</button>')
            .attr('aria-describedby', textId))
          .append($('<button type="button" class="mine">Keep mine</button>')
            .attr('aria-describedby', textId)));
      var existing = this.$('.conflict[data-field="' + name + '"]');
      if (existing.length) existing.replaceWith(notice); else this.$(field.slot).append(notice);
    },

    dropNotice: function (name) {
      this.$('.conflict[data-field="' + name + '"]').remove();
    },

    useTheirs: function (event) {
      var name = $(event.currentTarget).closest('.conflict').attr('data-field');
      this.show(name, this.model.get(name));
      this.control(name).focus();
    },

    keepMine: function (event) {
      var name = $(event.currentTarget).closest('.conflict').attr('data-field');
      this.dropNotice(name);
      this.control(name).focus();
      if (name === 'title') this.kept.title = true;
      else this.saveField(name, this.value(name));  // a select saves as it is chosen
    },

    // ---- This user's edits -----------------------------------------------------

    // Open the title for editing (or, when it is open, go back to it as it is).
    edit: function () {
      var id = e(this.model.id);
      if (this.control('title').length) return this.control('title').focus();
      this.shown.title = this.model.get('title');
      this.$('.title').replaceWith(
        '<form class="edit-form"><label class="sr-only" for="title-' + id + '">Title</label>' +
        '<input id="title-' + id + '" name="title" maxlength="200" required value="' +
        e(this.shown.title) + '"><button type="submit">Save</button>' +
        '<button type="button" class="cancel">Cancel</button></form>');
      this.control('title').focus();
    },

    // Close the title's form, showing the title as the model has it; focus back on Edit.
    closeEdit: function () {
      this.$('.edit-form').replaceWith($('<p class="title">').text(this.model.get('title')));
      this.show('title', this.model.get('title'));
      this.$('.edit').focus();
    },

    save: function (event) {
      event.preventDefault();
      var view = this;
      this.saveField('title', this.value('title')).then(function () { view.closeEdit(); });
    },

    cancel: function () {
      this.closeEdit();
    },

    move: function () {
      this.saveField('column', this.value('column'));
    },

    assign: function () {
      this.saveField('assignee', this.value('assignee'));
    },

    // Save one field; a promise of the saved card.
    saveField: function (name, value) {
      var change = {};
      change[name] = value;
      return this.model.save(change, {patch: true, wait: true});
    },

    destroy: function () {
      var view = this;
      this.deleting = true;  // her own delete: no notice of it
      this.model.destroy({wait: true, error: function () { view.deleting = false; }});
    },

    // The card left the board. Deleted by someone else while she was in it (typing its
    // title, or only focused), its place keeps a notice with her text and the focus
    // (deleted-card.js); otherwise it just goes.
    removed: function () {
      var open = this.control('title'), focused = $.contains(this.el, document.activeElement);
      var text = open.length && open.val() ? open.val() : null;
      if (this.deleting || (text == null && !focused)) return this.remove();
      var notice = new board.DeletedCardView({
        cardId: this.model.id, title: this.model.get('title'), text: text,
        collection: this.collection
      }).render();
      this.$el.replaceWith(notice.el);
      this.remove();
      notice.focus();
    }
  });

  window.board = _.extend(window.board || {}, {CardView: CardView});
})();
